"""What the product draws of a run: how the SDK's records map to the templates that show them."""
