"""topiczoo: supervised topic models with exact MCMC."""
