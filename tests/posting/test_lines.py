"""Following a finding's lines through a push: moved lines keep it, changed lines do not."""

from __future__ import annotations

from agents.posting.lines import LineMap, line_map, moves_of

# Old file lines 1..10. The push adds two lines after line 2, changes line 6, deletes line 9.
PATCH = """@@ -1,3 +1,5 @@
 one
 two
+added a
+added b
 three
@@ -5,3 +7,3 @@
 five
-six
+SIX
 seven
@@ -8,3 +10,2 @@
 eight
-nine
 ten"""


def test_untouched_lines_follow_the_lines_added_above_them() -> None:
    moved = line_map(PATCH)
    assert moved.follow(1, 2) == (1, 2)
    assert moved.follow(3, 3) == (5, 5)
    assert moved.follow(7, 8) == (9, 10)
    assert moved.follow(10, 10) == (11, 11)


def test_a_range_with_a_changed_or_deleted_line_does_not_follow_and_counts_as_changed() -> None:
    moved = line_map(PATCH)
    assert moved.follow(5, 7) is None and moved.changed(5, 7)
    assert moved.follow(9, 9) is None and moved.changed(9, 9)
    assert not moved.changed(3, 4)


def test_the_region_of_a_changed_line_is_what_replaced_it() -> None:
    moved = line_map(PATCH)
    assert moved.region(6, 6) == (7, 9)  # the hunk that replaced "six" spans new lines 7-9
    assert moved.region(3, 3) == (5, 5)


def test_pure_insertions_and_deletions_shift_what_follows() -> None:
    inserted = line_map("@@ -5,0 +6,2 @@\n+x\n+y")
    assert inserted.follow(5, 5) == (5, 5) and inserted.follow(6, 6) == (8, 8)
    deleted = line_map("@@ -5,2 +4,0 @@\n-x\n-y")
    assert deleted.follow(7, 7) == (5, 5) and deleted.changed(5, 6)


def test_a_compare_answer_maps_removed_renamed_and_unknown_files() -> None:
    moves = moves_of(
        [
            {"filename": "gone.py", "status": "removed"},
            {"filename": "new.py", "previous_filename": "old.py", "status": "renamed"},
            {"filename": "big.bin", "status": "modified"},  # no patch: GitHub did not say
            {"filename": "fresh.py", "status": "added", "patch": "@@ -0,0 +1 @@\n+x"},
        ]
    )
    assert moves.of("gone.py").changed(1, 1)
    assert moves.of("old.py").new_path == "new.py" and moves.of("old.py").follow(3, 3) == (3, 3)
    assert not moves.of("big.bin").changed(1, 1)  # never resolved on a guess
    assert moves.of("untouched.py") == LineMap()
