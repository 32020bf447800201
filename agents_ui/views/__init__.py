"""The pages and what their forms and streams talk to: one module per page or concern."""
