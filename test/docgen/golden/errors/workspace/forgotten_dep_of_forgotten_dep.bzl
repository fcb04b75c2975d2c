def j(): pass
