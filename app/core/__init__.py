"""What Cairn *means*: pure domain logic. Never imports Qt, sqlite3 or the network."""
