"""The Textual app: the only package in Neotask that imports textual."""
