"""Players meeting players: challenges, seeks and pairing, tells, table chat, and the spam budgets on them."""
