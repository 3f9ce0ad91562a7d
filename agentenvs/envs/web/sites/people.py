"""Names, places and filler text shared by the sites' seeded generators."""

from __future__ import annotations

import random

#: Logins every site has; each persona's password is ``<username>-pass``.
PERSONAS = [("emma", "Emma Larsen"), ("liam", "Liam Okafor"), ("olivia", "Olivia Chen"), ("noah", "Noah Schmidt")]
FIRST_NAMES = [
    "Ava",
    "Ben",
    "Carla",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kira",
    "Luca",
    "Maya",
    "Nils",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sami",
    "Tara",
    "Umar",
    "Vera",
    "Wes",
    "Yara",
    "Zoe",
]
LAST_NAMES = [
    "Adams",
    "Berg",
    "Costa",
    "Diaz",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Hansen",
    "Ito",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Novak",
    "Olsen",
    "Petrov",
    "Quist",
    "Rossi",
    "Singh",
    "Tanaka",
    "Ueda",
    "Vargas",
]
STREETS = ["Maple Street", "Harbor Road", "Elm Avenue", "Mill Lane", "Station Road", "Park Drive", "Church Street"]
CITIES = ["Springfield", "Riverton", "Lakeside", "Fairview", "Greenville", "Oakridge", "Bayport"]
WORDS = (
    "quick sturdy light warm bright quiet simple solid handy neat smooth clever fresh gentle bold calm "
    "works arrived nicely exactly expected better than great value would recommend again after weeks daily "
    "use the this for with and but really very well small large easy hard good fine build quality price"
).split()


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."
