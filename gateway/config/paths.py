"""Where the config file is looked for: names only, no imports, so ``tierclaw --help`` stays fast."""

DEFAULT_CONFIG_PATH = "~/.tierclaw/config.json"
CONFIG_ENV = "TIERCLAW_CONFIG"
