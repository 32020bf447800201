"""The Research Assistant's library: a few topics it answers from, each with facts and real sources.

Deterministic on purpose: the same question picks the same topic, the same facts in the same order.
A question outside the library gets an honest answer saying so, with a way to research it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Source:
    title: str
    publisher: str
    url: str
    snippet: str
    year: int | None = None

    def as_result(self) -> dict[str, str]:
        return {"title": self.title, "publisher": self.publisher, "url": self.url, "snippet": self.snippet}


@dataclass(frozen=True)
class Fact:
    text: str
    # Words of a question that make this fact worth putting first.
    about: frozenset[str]


@dataclass(frozen=True)
class Topic:
    subject: str
    triggers: frozenset[str]
    lead: str
    facts: tuple[Fact, ...]
    bottom_line: str
    sources: tuple[Source, ...]


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _matches(word: str, keyword: str) -> bool:
    """Whole words, with room for endings: "pumps" meets "pump", "efficient" meets "efficiency"."""
    if word == keyword:
        return True
    if len(keyword) >= 4 and word.startswith(keyword) and len(word) - len(keyword) <= 3:
        return True
    shorter, longer = sorted((word, keyword), key=len)
    return len(shorter) >= 5 and longer.startswith(shorter[:-1])


def _phrase_in(phrase: str, question_words: list[str]) -> bool:
    parts = phrase.split()
    return any(
        all(_matches(question_words[i + k], part) for k, part in enumerate(parts))
        for i in range(len(question_words) - len(parts) + 1)
    )


def find_topic(question: str) -> Topic | None:
    """The topic the question is most about (most distinct triggers), or None."""
    question_words = words(question)
    best, best_score = None, 0
    for topic in LIBRARY:
        score = sum(1 for trigger in topic.triggers if _phrase_in(trigger, question_words))
        if score > best_score:
            best, best_score = topic, score
    return best


def facts_for(topic: Topic, question: str, count: int = 3) -> tuple[list[Fact], list[str]]:
    """The `count` facts that best answer the question, and the question's words that chose them."""
    question_words = words(question)

    def hits(fact: Fact) -> list[str]:
        return [w for w in question_words if any(_matches(w, keyword) for keyword in fact.about)]

    ranked = sorted(enumerate(topic.facts), key=lambda pair: (-len(set(hits(pair[1]))), pair[0]))
    chosen = [fact for _, fact in ranked[:count]]
    angle = list(dict.fromkeys(w for fact in chosen for w in hits(fact)))
    return chosen, angle


def _fact(text: str, *about: str) -> Fact:
    return Fact(text, frozenset(about))


LIBRARY: tuple[Topic, ...] = (
    Topic(
        subject="heat pumps",
        triggers=frozenset({"heat pump", "heatpump", "boiler", "furnace", "air source", "ground source"}),
        lead=(
            "A heat pump moves heat instead of making it, so it delivers about three to four units of heat "
            "for each unit of electricity it uses; even the best gas boiler delivers a little less than one "
            "unit of heat per unit of gas."
        ),
        facts=(
            _fact(
                "Efficiency falls as the outside air gets colder, but current cold-climate models keep "
                "heating well below freezing; a seasonal average (SCOP) of around 3 is common in northern "
                "Europe.",
                "cold",
                "winter",
                "freezing",
                "climate",
                "temperature",
                "snow",
                "efficient",
            ),
            _fact(
                "Running costs depend mostly on the price of electricity against gas: where a kWh of "
                "electricity costs more than three to four times a kWh of gas, the savings over a condensing "
                "boiler shrink.",
                "cost",
                "price",
                "bill",
                "running",
                "cheap",
                "expensive",
                "save",
                "money",
                "compare",
                "gas",
            ),
            _fact(
                "Older homes usually cope after modest upgrades: better insulation and a few larger "
                "radiators let the pump run at the low flow temperatures where it works best.",
                "old",
                "older",
                "house",
                "home",
                "insulation",
                "radiator",
                "retrofit",
                "install",
            ),
            _fact(
                "A condensing gas boiler turns roughly 90% of the gas's energy into heat; a heat pump with a "
                "coefficient of performance of 3 delivers 300% of the electricity it uses.",
                "boiler",
                "gas",
                "compare",
                "versus",
                "efficient",
                "better",
            ),
            _fact(
                "Because most of the heat comes from the outside air, emissions are usually far below a gas "
                "boiler's, and they keep falling as the grid decarbonises.",
                "emissions",
                "carbon",
                "co2",
                "green",
                "environment",
                "climate",
            ),
            _fact(
                "Expect a service life of 15 to 20 years with a yearly check; an outdoor unit is about as "
                "loud as a fridge from a few metres away.",
                "lifetime",
                "last",
                "maintenance",
                "years",
                "noise",
                "loud",
            ),
        ),
        bottom_line=(
            "In short: for most homes a well-sized heat pump heats with far less carbon, and often for less "
            "money, than a gas boiler; the electricity-to-gas price ratio and the flow temperature your "
            "radiators need decide by how much."
        ),
        sources=(
            Source(
                "The Future of Heat Pumps",
                "International Energy Agency",
                "https://www.iea.org/reports/the-future-of-heat-pumps",
                "How heat pumps perform, what they cost to run, and how fast they are being installed.",
                2022,
            ),
            Source(
                "Heat Pump Systems",
                "U.S. Department of Energy",
                "https://www.energy.gov/energysaver/heat-pump-systems",
                "Types of heat pumps, their efficiency ratings, and how to choose one.",
            ),
            Source(
                "Air source heat pumps",
                "Energy Saving Trust",
                "https://energysavingtrust.org.uk/advice/air-source-heat-pumps/",
                "Costs, savings and what an installation involves in a typical home.",
            ),
        ),
    ),
    Topic(
        subject="rooftop solar panels",
        triggers=frozenset({"solar", "photovoltaic", "pv", "rooftop"}),
        lead=(
            "Most rooftop panels sold today turn about 20 to 22% of the sunlight that reaches them into "
            "electricity; the best commercial modules do a little better, and every panel slowly loses "
            "output as it ages."
        ),
        facts=(
            _fact(
                "Efficiency matters most when roof space is short: a more efficient panel gives more "
                "kilowatt-hours per square metre, not better ones.",
                "efficiency",
                "efficient",
                "percent",
                "space",
                "roof",
                "best",
            ),
            _fact(
                "Panels produce less as they heat up, about 0.3 to 0.4% per degree above 25 °C, so a cold "
                "sunny day can beat a hot one.",
                "heat",
                "hot",
                "temperature",
                "summer",
                "efficiency",
                "weather",
            ),
            _fact(
                "Output typically drops by about 0.5% a year; most manufacturers guarantee 80 to 90% of the "
                "original output after 25 years.",
                "degrade",
                "degradation",
                "age",
                "lifetime",
                "years",
                "warranty",
                "last",
            ),
            _fact(
                "Orientation and shade often matter more than the model: in the northern hemisphere a "
                "south-facing roof at 30 to 40 degrees yields the most, and partial shade can cut a string's "
                "output sharply.",
                "orientation",
                "south",
                "north",
                "angle",
                "shade",
                "shading",
                "roof",
                "tilt",
            ),
            _fact(
                "Payback depends on what you pay for grid electricity and how much of the output you use "
                "yourself; in many places it falls between 6 and 12 years.",
                "cost",
                "payback",
                "save",
                "money",
                "price",
                "worth",
                "cheap",
            ),
            _fact(
                "A home battery does not make panels more efficient, but it lets you use more of their "
                "output in the evening instead of exporting it for little.",
                "battery",
                "storage",
                "night",
                "evening",
                "export",
            ),
        ),
        bottom_line=(
            "In short: compare panels on price per watt and warranty, and mount them where sun and roof "
            "allow; a point or two of efficiency counts for less than orientation and shade."
        ),
        sources=(
            Source(
                "Homeowner's Guide to Going Solar",
                "U.S. Department of Energy",
                "https://www.energy.gov/eere/solar/homeowners-guide-going-solar",
                "What to check before installing panels: roof, costs, incentives and contracts.",
            ),
            Source(
                "Best Research-Cell Efficiency Chart",
                "National Renewable Energy Laboratory",
                "https://www.nrel.gov/pv/cell-efficiency.html",
                "Record efficiencies of solar cells by technology, tracked since 1976.",
            ),
            Source(
                "Photovoltaics Report",
                "Fraunhofer ISE",
                "https://www.ise.fraunhofer.de/en/publications/studies/photovoltaics-report.html",
                "Module efficiencies, prices and performance ratios across the market.",
            ),
        ),
    ),
    Topic(
        subject="batteries",
        triggers=frozenset(
            {"battery", "lithium", "sodium", "lfp", "electric car", "electric vehicle", "ev", "evs"}
        ),
        lead=(
            "Lithium-ion cells still store the most energy for their weight, about 150 to 270 Wh per "
            "kilogram at the cell, while today's sodium-ion cells reach roughly 100 to 160 Wh/kg with "
            "cheaper, more abundant materials."
        ),
        facts=(
            _fact(
                "Sodium-ion needs no lithium, cobalt or nickel; its appeal is cost and secure supply rather "
                "than range, which suits small cars and grid storage.",
                "sodium",
                "cost",
                "cheap",
                "price",
                "materials",
                "supply",
                "compare",
                "versus",
            ),
            _fact(
                "Sodium-ion keeps more of its capacity in the cold than most lithium-ion chemistries, one of "
                "its clearest advantages.",
                "cold",
                "winter",
                "temperature",
                "freezing",
                "sodium",
            ),
            _fact(
                "Lithium iron phosphate (LFP) cells give up some energy density for a long cycle life and "
                "better thermal stability, which is why many standard-range electric cars now use them.",
                "lfp",
                "iron",
                "phosphate",
                "safety",
                "fire",
                "cycle",
                "cycles",
                "lithium",
            ),
            _fact(
                "Car batteries wear more slowly than many expected: typical losses are about 1 to 2% of "
                "capacity a year, and warranties commonly run for 8 years.",
                "degrade",
                "degradation",
                "life",
                "lifetime",
                "years",
                "warranty",
                "last",
                "car",
                "ev",
                "evs",
                "worth",
                "buy",
            ),
            _fact(
                "Fast charging from 10 to 80% usually takes 20 to 40 minutes; charging day to day between "
                "about 20 and 80% is gentler on the cells.",
                "charging",
                "charge",
                "fast",
                "range",
                "minutes",
            ),
            _fact(
                "Recycling recovers most of a lithium-ion cell's cobalt, nickel and lithium, and over its "
                "life an electric car emits less than a petrol car on most grids.",
                "recycle",
                "recycling",
                "mining",
                "environment",
                "emissions",
                "carbon",
            ),
        ),
        bottom_line=(
            "In short: lithium-ion wins where weight and range matter most; sodium-ion is worth watching "
            "where cost, cold weather and supply matter more."
        ),
        sources=(
            Source(
                "Global EV Outlook 2024",
                "International Energy Agency",
                "https://www.iea.org/reports/global-ev-outlook-2024",
                "Electric car sales, battery chemistries and prices worldwide.",
                2024,
            ),
            Source(
                "Batteries for Electric Vehicles",
                "U.S. Department of Energy, Alternative Fuels Data Center",
                "https://afdc.energy.gov/vehicles/electric-batteries",
                "Battery types used in electric cars, their life and their recycling.",
            ),
            Source(
                "Batteries and Secure Energy Transitions",
                "International Energy Agency",
                "https://www.iea.org/reports/batteries-and-secure-energy-transitions",
                "Costs, chemistries including sodium-ion, and supply chains for batteries.",
                2024,
            ),
        ),
    ),
    Topic(
        subject="caffeine",
        triggers=frozenset({"coffee", "caffeine", "espresso", "energy drink", "decaf"}),
        lead=(
            "For most healthy adults, up to about 400 mg of caffeine a day, roughly four cups of brewed "
            "coffee, is not linked with harmful effects."
        ),
        facts=(
            _fact(
                "Caffeine's half-life is around five hours, so when you have the last cup matters as much "
                "as how many you have.",
                "sleep",
                "night",
                "evening",
                "bedtime",
                "afternoon",
                "late",
            ),
            _fact(
                "A cup of brewed coffee has about 80 to 100 mg, an espresso about 60 to 80 mg and a cup of "
                "black tea about 40 to 50 mg.",
                "cup",
                "cups",
                "much",
                "many",
                "amount",
                "espresso",
                "tea",
                "energy",
            ),
            _fact(
                "Sensitivity varies widely: some people feel jittery or anxious, or notice a racing heart, "
                "well below 400 mg.",
                "heart",
                "blood",
                "pressure",
                "anxiety",
                "anxious",
                "jitter",
                "jittery",
            ),
            _fact(
                "During pregnancy the usual advice is to stay under 200 mg a day.",
                "pregnant",
                "pregnancy",
                "breastfeeding",
            ),
            _fact(
                "In large observational studies moderate coffee drinking goes with neutral or slightly lower "
                "health risks; such studies show association, not cause.",
                "health",
                "healthy",
                "benefit",
                "benefits",
                "risk",
                "good",
                "bad",
            ),
            _fact(
                "Regular use builds tolerance; stopping at once can bring a few days of headaches and "
                "tiredness, so cutting down gradually is easier.",
                "tolerance",
                "withdrawal",
                "headache",
                "stop",
                "quit",
            ),
        ),
        bottom_line=(
            "In short: a few cups a day are fine for most adults; mind the timing if you sleep badly, and "
            "have less if you are pregnant or sensitive to it."
        ),
        sources=(
            Source(
                "Spilling the Beans: How Much Caffeine is Too Much?",
                "U.S. Food and Drug Administration",
                "https://www.fda.gov/consumers/consumer-updates/spilling-beans-how-much-caffeine-too-much",
                "How much caffeine adults can usually take, and who should take less.",
            ),
            Source(
                "Scientific Opinion on the safety of caffeine",
                "European Food Safety Authority",
                "https://www.efsa.europa.eu/en/efsajournal/pub/4102",
                "Safe daily intakes of caffeine for adults, in pregnancy and for children.",
                2015,
            ),
            Source(
                "Foods to avoid in pregnancy",
                "NHS",
                "https://www.nhs.uk/pregnancy/keeping-well/foods-to-avoid/",
                "Advice on caffeine and other foods during pregnancy.",
            ),
        ),
    ),
    Topic(
        subject="sleep",
        triggers=frozenset({"sleep", "insomnia", "nap", "melatonin", "tired", "bedtime"}),
        lead=(
            "Most adults need at least seven hours of sleep a night; getting less, night after night, is "
            "linked with poorer concentration and mood and with long-term health problems."
        ),
        facts=(
            _fact(
                "A regular schedule helps more than almost anything else: going to bed and getting up at "
                "the same times, weekends included, steadies the body clock.",
                "schedule",
                "routine",
                "regular",
                "weekend",
                "better",
                "improve",
                "fall",
            ),
            _fact(
                "Bright light in the evening, screens included, delays the release of melatonin; daylight "
                "in the morning does the opposite.",
                "light",
                "screen",
                "screens",
                "phone",
                "blue",
                "evening",
                "melatonin",
            ),
            _fact(
                "Caffeine has a half-life of around five hours, so an afternoon coffee can still keep you "
                "awake at bedtime.",
                "caffeine",
                "coffee",
                "tea",
                "afternoon",
            ),
            _fact(
                "Alcohol can help you fall asleep but breaks up sleep later in the night and cuts REM sleep.",
                "alcohol",
                "drink",
                "wine",
                "beer",
            ),
            _fact(
                "Naps of 10 to 20 minutes restore alertness without the grogginess of longer ones; late naps "
                "make the night harder.",
                "nap",
                "naps",
                "afternoon",
                "tired",
            ),
            _fact(
                "For insomnia that lasts, cognitive behavioural therapy (CBT-I) is the recommended first "
                "treatment, before sleeping pills.",
                "insomnia",
                "awake",
                "wake",
                "pills",
                "treatment",
            ),
        ),
        bottom_line=(
            "In short: protect seven hours or more, keep the timing regular, and keep bright light, caffeine "
            "and alcohol out of your evenings."
        ),
        sources=(
            Source(
                "About Sleep",
                "Centers for Disease Control and Prevention",
                "https://www.cdc.gov/sleep/about/index.html",
                "How much sleep each age group needs, and why it matters.",
            ),
            Source(
                "How to get to sleep",
                "NHS",
                "https://www.nhs.uk/live-well/sleep-and-tiredness/how-to-get-to-sleep/",
                "Everyday changes that help you fall and stay asleep.",
            ),
            Source(
                "Healthy Sleep Habits",
                "American Academy of Sleep Medicine",
                "https://sleepeducation.org/healthy-sleep/healthy-sleep-habits/",
                "Habits that improve sleep, from schedules to light and caffeine.",
            ),
        ),
    ),
)
