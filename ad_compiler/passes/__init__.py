"""IR -> IR passes. Each is a pure function ``Function -> Function``."""
