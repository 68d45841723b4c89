"""Who gets in: login, tokens, the cross-site rule, client addresses and host names."""
