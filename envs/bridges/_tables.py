"""The bridged catalogues as static tables (private): what is registered, and what is not and why.

Registering from these tables imports neither library, so ``import trl_env`` stays as fast with
the bridges as without them. ``tests/test_bridge_tables.py`` checks the tables against the
installed libraries (every task listed, every oddity still odd).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "REASONING_GYM_ANSWER_GRAMMARS",
    "REASONING_GYM_LENIENT_SCORER",
    "REASONING_GYM_NOT_BRIDGED",
    "REASONING_GYM_NOT_DETERMINISTIC_ACROSS_PROCESSES",
    "REASONING_GYM_NO_STORED_ANSWER",
    "REASONING_GYM_TASKS",
    "REASONING_GYM_TOUCHES_GLOBAL_RNG",
    "TEXTARENA_GAMES",
    "TEXTARENA_NOT_BRIDGED",
    "TextArenaGame",
    "reasoning_gym_id",
]

REASONING_GYM_TASKS: tuple[str, ...] = (
    "ab",
    "acre",
    "advanced_geometry",
    "aiw",
    "arc_1d",
    "arc_agi",
    "base_conversion",
    "basic_arithmetic",
    "bf",
    "binary_alternation",
    "binary_matrix",
    "bitwise_arithmetic",
    "boxnet",
    "caesar_cipher",
    "calendar_arithmetic",
    "chain_sum",
    "circuit_logic",
    "codeio",
    "coin_flip",
    "color_cube_rotation",
    "complex_arithmetic",
    "count_bits",
    "count_primes",
    "countdown",
    "course_schedule",
    "cryptarithm",
    "decimal_arithmetic",
    "decimal_chain_sum",
    "dice",
    "emoji_mystery",
    "family_relationships",
    "figlet_font",
    "fraction_simplification",
    "futoshiki",
    "game_of_life",
    "game_of_life_halting",
    "gcd",
    "graph_color",
    "group_anagrams",
    "gsm_symbolic",
    "intermediate_integration",
    "isomorphic_strings",
    "jugs",
    "kakurasu",
    "knight_swap",
    "knights_knaves",
    "largest_island",
    "lcm",
    "leg_counting",
    "letter_counting",
    "letter_jumble",
    "list_functions",
    "mahjong_puzzle",
    "manipulate_matrix",
    "maze",
    "mini_sudoku",
    "modulo_grid",
    "n_queens",
    "needle_haystack",
    "number_filtering",
    "number_format",
    "number_sequence",
    "number_sorting",
    "palindrome_generation",
    "palindrome_partitioning",
    "path_star",
    "polynomial_equations",
    "polynomial_multiplication",
    "pool_matrix",
    "power_function",
    "prime_factorization",
    "products",
    "propositional_logic",
    "puzzle24",
    "quantum_lock",
    "ransom_note",
    "rearc",
    "rectangle_count",
    "rotate_matrix",
    "rotten_oranges",
    "rubiks_cube",
    "rush_hour",
    "self_reference",
    "sentence_reordering",
    "shortest_path",
    "simple_equations",
    "simple_geometry",
    "simple_integration",
    "sokoban",
    "spell_backward",
    "spiral_matrix",
    "string_insertion",
    "string_manipulation",
    "string_splitting",
    "string_synthesis",
    "sudoku",
    "survo",
    "syllogism",
    "time_intervals",
    "tower_of_hanoi",
    "tsumego",
    "word_ladder",
    "word_sequence_reversal",
    "word_sorting",
    "zebra_puzzles",
)
"""Every reasoning-gym 0.1.25 task that is bridged (all 106 but ``composite``)."""

REASONING_GYM_NOT_BRIDGED: dict[str, str] = {
    "composite": "a mixer of other tasks that needs a config naming them (its default config "
    "fails: 'Must specify at least one dataset'); mix bridged IDs in a dataset instead",
}
"""reasoning-gym tasks that are not registered, and why."""

REASONING_GYM_NO_STORED_ANSWER: frozenset[str] = frozenset(
    {"boxnet", "graph_color", "propositional_logic", "rubiks_cube", "rush_hour"}
)
"""Tasks whose problems have ``answer=None`` (``score_answer`` verifies a solution instead):
bridged without an oracle (:class:`ReasoningGymEnv`, not :class:`StoredAnswerReasoningGymEnv`)."""

REASONING_GYM_NOT_DETERMINISTIC_ACROSS_PROCESSES: frozenset[str] = frozenset(
    {"isomorphic_strings", "knight_swap", "polynomial_multiplication", "ransom_note", "word_ladder"}
)
"""Tasks whose problem (or, for ``knight_swap`` and ``word_ladder``, stored answer: one of several
right ones) for a fixed seed depends on ``PYTHONHASHSEED`` (they iterate over sets of strings):
reproducible within a process, and across processes with a fixed ``PYTHONHASHSEED``."""

REASONING_GYM_LENIENT_SCORER: frozenset[str] = frozenset({"game_of_life_halting", "puzzle24"})
"""Tasks whose ``score_answer`` gives 1 to answers that do not solve the problem (``puzzle24``
accepts any expression of four numbers equal to 24, not only of the four given;
``game_of_life_halting`` compares ``bool(answer) == bool(stored)`` on strings, so every non-empty
answer scores 1): bridged as they are, since the reward is by design the task's own score; the
docs warn about it."""

REASONING_GYM_ANSWER_GRAMMARS: dict[str, str] = {
    "binary_matrix": "literal",
    "n_queens": "literal",
    "spiral_matrix": "literal",
    "string_insertion": "literal",
    "countdown": "arithmetic",
    "puzzle24": "arithmetic",
    "polynomial_multiplication": "polynomial",
    "simple_integration": "integral",
    "intermediate_integration": "integral",
}
"""Tasks whose ``score_answer`` runs the answer as code (``eval`` of a Python list, or
``sympy.parse_expr`` of an expression), and the grammar their answers are checked against before
the scorer sees them (see ``_answer_grammar.py``). Found by reading reasoning-gym 0.1.25's scorers;
``tests/test_bridge_security.py`` scans the installed library's scorers for calls that execute
text and fails on any task missing here."""

REASONING_GYM_TOUCHES_GLOBAL_RNG: frozenset[str] = frozenset({"pool_matrix"})
"""Tasks that draw from the global ``numpy.random`` state: bridged on a private copy of it (every
library call of the bridge runs that way, see ``_isolation.py``)."""


def reasoning_gym_id(task: str) -> str:
    """The gym ID of a reasoning-gym task: ``reasoning_gym/`` + CamelCase name + ``-v0``.

    Each ``_``-separated part gets its first letter upper-cased; the rest is kept.

    Example:
        >>> reasoning_gym_id("tower_of_hanoi"), reasoning_gym_id("arc_1d"), reasoning_gym_id("n_queens")
        ('reasoning_gym/TowerOfHanoi-v0', 'reasoning_gym/Arc1d-v0', 'reasoning_gym/NQueens-v0')
    """
    return "reasoning_gym/" + "".join(p[:1].upper() + p[1:] for p in task.split("_")) + "-v0"


@dataclass(frozen=True)
class TextArenaGame:
    """One bridged TextArena single-player game.

    Attributes:
        name: TextArena's name, also ours: ``TextArena/<name>-v0``.
        description: One line for ``trl-env list`` and the docs.
        max_episode_steps: Turn limit (gymnasium's ``TimeLimit``), above the game's own.
        moves: Templates of legal-looking moves for ``random_action`` (``{d}`` is a digit,
            ``{L}`` a peg letter A-C).
        has_oracle: Whether ``textarena_oracles.SOLVERS`` has a solver for it.
        opponent: ``"random"`` for a two-player game against a random legal-move opponent
            (``textarena_two_player``), ``None`` for a single-player game.
    """

    name: str
    description: str
    max_episode_steps: int
    moves: tuple[str, ...] = ("[{d}]",)
    has_oracle: bool = False
    opponent: str | None = None


TEXTARENA_GAMES: tuple[TextArenaGame, ...] = (
    TextArenaGame(
        "2048", "Slide tiles to reach 2048.", 1000, ("[up]", "[down]", "[left]", "[right]")
    ),
    TextArenaGame(
        "Bandit",
        "Find the best of 5 buttons in 20 pulls.",
        40,
        ("[red]", "[blue]", "[green]", "[yellow]", "[purple]"),
    ),
    TextArenaGame(
        "Blackjack", "Five hands of blackjack against the dealer.", 100, ("[hit]", "[stand]")
    ),
    TextArenaGame(
        "Countdown", "Reach 532 from 100 75 6 4 3 2 with + - * /.", 100, ("[{d} {d}]", "[0 1 +]")
    ),
    TextArenaGame(
        "Crosswords", "Fill a 3-word crossword from clues.", 60, ("[{d} {d} a]", "[{d} {d} e]")
    ),
    TextArenaGame(
        "Cryptarithm", "Solve SEND + MORE = MONEY letter by letter.", 200, ("[S {d}]", "[E {d}]")
    ),
    TextArenaGame(
        "FifteenPuzzle",
        "Slide the 15 puzzle into order.",
        400,
        ("[up]", "[down]", "[left]", "[right]"),
    ),
    TextArenaGame(
        "FrozenLake",
        "Cross a 4x4 frozen lake without falling in a hole.",
        100,
        ("[up]", "[down]", "[left]", "[right]"),
        has_oracle=True,
    ),
    TextArenaGame(
        "GuessTheNumber",
        "Find a number in 1-20 from higher/lower hints.",
        20,
        ("[{d}]", "[1{d}]"),
        has_oracle=True,
    ),
    TextArenaGame("LightsOut", "Switch off a 5x5 grid of lights.", 40, ("[{d} {d}]",)),
    TextArenaGame(
        "LogicPuzzle",
        "Fill a logic-grid puzzle from clues.",
        200,
        ("[Alice park X]", "[Bob park O]"),
    ),
    TextArenaGame(
        "Mastermind", "Crack a 4-digit code from black/white pegs.", 40, ("[{d} {d} {d} {d}]",)
    ),
    TextArenaGame("Minesweeper", "Clear an 8x8 minefield with 10 mines.", 200, ("[{d} {d}]",)),
    TextArenaGame("PegJump", "Peg solitaire on a triangle: leave one peg.", 40, ("[{d} {d}]",)),
    TextArenaGame(
        "RushHour", "Slide cars to get the red car out.", 200, ("[A+]", "[A-]", "[X+]", "[X-]")
    ),
    TextArenaGame(
        "Secretary",
        "Pick the best of 5 candidates seen one at a time.",
        20,
        ("[accept]", "[continue]"),
    ),
    TextArenaGame("Set", "Find sets of three cards in the game of Set.", 200, ("[{d} {d} {d}]",)),
    TextArenaGame(
        "Slitherlink", "Draw the loop of a 4x4 Slitherlink.", 400, ("[h {d} {d}]", "[v {d} {d}]")
    ),
    TextArenaGame(
        "Sokoban", "Push 3 boxes onto their targets.", 60, ("[up]", "[down]", "[left]", "[right]")
    ),
    TextArenaGame(
        "Sudoku", "Fill a 9x9 Sudoku with 60 clues.", 200, ("[{d} {d} {d}]",), has_oracle=True
    ),
    TextArenaGame("ThreeCardMonte", "Follow the ball under 3 shuffled cups.", 20, ("[{d}]",)),
    TextArenaGame(
        "TowerOfHanoi", "Move 3 disks from tower A to C.", 30, ("[{L} {L}]",), has_oracle=True
    ),
    TextArenaGame(
        "TicTacToe",
        "Tic-tac-toe (as O, moving first) against a random legal-move opponent.",
        20,
        ("[{d}]",),
        opponent="random",
    ),
    TextArenaGame(
        "ConnectFour",
        "Connect Four (6x7) against a random legal-move opponent.",
        60,
        ("[{d}]",),
        opponent="random",
    ),
)
"""The bridged TextArena 0.7.4 games, registered as ``TextArena/<name>-v0``: 22 single-player games
and 2 two-player games against a random legal-move opponent."""

TEXTARENA_NOT_BRIDGED: dict[str, str] = {
    **dict.fromkeys(
        ("Hangman", "Wordle", "WordLadder", "WordSearch"),
        "downloads an nltk word list at import (no network here); the catalogue has native "
        "TextHangman-v0 and TextWordle-v0 with bundled word lists",
    ),
    **dict.fromkeys(
        ("GuessWho", "TwentyQuestions"),
        "the game master is an OpenRouter LLM (network and an API key)",
    ),
    **dict.fromkeys(
        ("Klondike", "UltimateTexasHoldem"),
        "its module does not import on Python 3.11 (SyntaxError in TextArena 0.7.4)",
    ),
    "other two-player and multi-player games": "not bridged yet: each needs a scripted opponent "
    "and TextArena has no legal-move API to draw a random legal move from (TicTacToe and "
    "ConnectFour have one written here); negotiation and social games need an LLM opponent",
}
"""TextArena games that are not registered, and why."""
