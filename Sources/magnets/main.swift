print("magnets")
