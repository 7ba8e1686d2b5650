"""Match recordings: the format (one for the board and the simulator), the writer that
appends them to the data partition, and `foosball replay` on the game panel's page."""
