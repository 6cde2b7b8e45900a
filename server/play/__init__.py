"""Playing at a table: the authority every table action passes through, and the computer's seats and their worker processes."""
