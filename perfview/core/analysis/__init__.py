"""Pure analyses over the model: tables, call trees, nesting, and the torch pages' numbers."""
