"""What the user *sees*: widgets, the controller and the worker threads. The only layer that imports Qt."""
