"""Settings: where ohtui keeps its files, and (later) config.toml and keyring secrets."""
