"""Who Cairn *talks to*: the model provider protocol and the Anthropic implementation."""
