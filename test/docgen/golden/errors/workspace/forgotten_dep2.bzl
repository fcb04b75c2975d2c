def i(): pass
