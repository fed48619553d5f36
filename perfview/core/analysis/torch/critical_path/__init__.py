"""Critical path of a torch trace: the dependency graph (`graph`), the path per step and its
breakdown (`path`), why each GPU gap is idle (`idle_gaps`) and what-if replays (`what_if`)."""
