"""Adapters to other projects' interfaces (trainers, foreign env classes); each imports one family at most."""
