"""The gateway: CLI now; configuration, process loop and scheduler to come. It wires memory and channels."""
