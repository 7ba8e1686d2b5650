"""Match recordings: the format (one for the board and the simulator) and the writer that
appends them to the data partition. `foosball replay` (laptop-side) is in foosball.analysis."""
