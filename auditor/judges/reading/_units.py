"""The words of quantities: months, number words, scales, currencies and units.

Tables only, read by :mod:`auditor.judges.reading._numbers` to normalise a quantity's spelling
(``80 dollars`` is ``USD``, ``two weeks`` is 14 days, ``1.2 million`` is ``1.2e6``).
"""

from __future__ import annotations

MONTHS = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
MONTH_ABBR = {m[:3]: i for m, i in MONTHS.items()} | {"sept": 9}
MONTH_RE = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)

NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
    "single": 1,
    "double": 2,
    "twice": 2,
    "triple": 3,
}
SCALE = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "m": 1e6,
    "mn": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
}
CURRENCY_WORDS = {
    "dollar": "USD",
    "dollars": "USD",
    "usd": "USD",
    "us$": "USD",
    "euro": "EUR",
    "euros": "EUR",
    "eur": "EUR",
    "pound": "GBP",
    "pounds": "GBP",
    "gbp": "GBP",
    "cents": "cent",
    "yen": "JPY",
    "jpy": "JPY",
    "inr": "INR",
    "rupees": "INR",
    "cad": "CAD",
    "aud": "AUD",
}
CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
# unit stem -> (family, factor to the family's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "second": ("time", 1 / 86400),
    "sec": ("time", 1 / 86400),
    "minut": ("time", 1 / 1440),
    "min": ("time", 1 / 1440),
    "hour": ("time", 1 / 24),
    "hr": ("time", 1 / 24),
    "h": ("time", 1 / 24),
    "day": ("time", 1.0),
    "week": ("time", 7.0),
    "fortnight": ("time", 14.0),
    "month": ("months", 1.0),
    "year": ("months", 12.0),
    "yr": ("months", 12.0),
    "decad": ("months", 120.0),
    "g": ("mass", 1.0),
    "gram": ("mass", 1.0),
    "kg": ("mass", 1000.0),
    "kilogram": ("mass", 1000.0),
    "lb": ("mass", 453.6),
    "pound": ("mass", 453.6),
    "m": ("length", 1.0),
    "meter": ("length", 1.0),
    "metr": ("length", 1.0),
    "km": ("length", 1000.0),
    "kilomet": ("length", 1000.0),
    "cm": ("length", 0.01),
    "mm": ("length", 0.001),
    "mile": ("length", 1609.3),
    "ft": ("length", 0.3048),
    "feet": ("length", 0.3048),
    "foot": ("length", 0.3048),
    "l": ("volume", 1.0),
    "litr": ("volume", 1.0),
    "liter": ("volume", 1.0),
    "ml": ("volume", 0.001),
    "w": ("power", 1.0),
    "watt": ("power", 1.0),
    "kw": ("power", 1000.0),
}
