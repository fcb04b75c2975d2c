def g(): pass
