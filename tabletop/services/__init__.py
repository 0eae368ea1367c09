"""Every change to the table goes through here: validate and lock, change state, record the
event in the same transaction, broadcast after commit. Views, consumers, admin actions and
management commands call these functions and nothing else that writes."""
