"""What the user *sees*: widgets, the controller, the worker threads. The only Qt layer."""
