"""Wire codecs between ohtui's engine objects and the OpenHands agent-server JSON."""
