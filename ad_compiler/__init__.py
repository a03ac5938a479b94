"""ad_compiler: source-to-source automatic differentiation of NumPy code."""
