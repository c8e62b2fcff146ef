"""Scenario f0a1c01 (train): Maya's recipe collection in Simple Note.

Maya keeps 13 recipes as notes tagged 'recipe' (three pages of `search_notes` at the default page
size). Distractors: a 'food' note about recipes that is not tagged 'recipe', and Ben's own recipes.
Variants: count them (question), tag the quick ones (needs each note's content), build an index note.
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, added_only_check, check, kept_rows_check, login_preamble, one_added_check, paginate,
    question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

# (title, extra tags, minutes): all of Maya's notes tagged 'recipe'.
RECIPES = (
    ("Shakshuka", ["breakfast"], 25), ("Banana Bread", ["baking"], 70), ("Green Curry", ["dinner"], 35),
    ("Overnight Oats", ["breakfast"], 5), ("Mushroom Risotto", ["dinner"], 45), ("Lemon Bars", ["baking"], 60),
    ("Chana Masala", ["dinner"], 30), ("Miso Soup", [], 15), ("Focaccia", ["baking"], 150),
    ("Pad Thai", ["dinner"], 30), ("Granola", ["breakfast"], 40), ("Gazpacho", [], 20), ("Pork Dumplings", ["dinner"], 90),
)
QUICK_LIMIT = 30
QUICK_TITLES = sorted(title for title, _, minutes in RECIPES if minutes <= QUICK_LIMIT)


def seed_base(ctx: SeedContext) -> None:
    notes = ctx.models.simple_note.Note
    maya = ctx.user("simple_note", ctx.supervisor.key)
    for index, (title, tags, minutes) in enumerate(RECIPES):
        notes.create_save(
            user_id=maya.id, title=title, tags=["recipe", *tags], pinned=index == 4,
            content=f"Time: {minutes} minutes\nServes: {2 + index % 4}\nSteps: prep, cook, taste, adjust seasoning.",
            created_at=ctx.at(f"2023-0{1 + index % 4}-{10 + index}T18:00:00"),
        )
    notes.create_save(user_id=maya.id, title="Recipes to try", tags=["food", "wishlist"],
                      content="Time: unknown\nBirria tacos, khachapuri, tteokbokki.")
    ben = ctx.user("simple_note", "ben")
    for title in ("Jollof Rice", "Suya"):
        notes.create_save(user_id=ben.id, title=title, tags=["recipe"], content="Time: 20 minutes\nFrom Mum.")


LOGIN = login_preamble("simple_note") + paginate("recipes", "simple_note.search_notes", 'tags=["recipe"]')


COUNT = TaskDef(
    variant=1,
    difficulty=1,
    instruction="How many of my notes in Simple Note are tagged 'recipe'?",
    paraphrases={
        "mild": ("How many of my Simple Note notes carry the tag 'recipe'?",),
        "medium": ("In Simple Note, count my notes that are tagged 'recipe': how many are there?",),
        "strong": (
            "It's Maya. I'm trying to get a sense of how big my cooking collection has grown; could you tell me the "
            "number of Simple Note entries I've labelled 'recipe'?",
        ),
        "naturalistic": ("quick q - how many notes do i have in Simple Note w/ the tag 'recipe'? thx",),
    },
    answer=len(RECIPES),
    required_apps=("simple_note",),
    solution=solution(LOGIN, '''
    apis.supervisor.complete_task(answer=len(recipes))
'''),
    **question_checks("the number of the user's notes tagged 'recipe'"),
)

TAG_QUICK = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        f"In Simple Note, add the tag 'quick' to every one of my recipes (notes tagged 'recipe') that takes "
        f"{QUICK_LIMIT} minutes or less. Keep their other tags as they are."
    ),
    paraphrases={
        "mild": (
            "In Simple Note, put the tag 'quick' on each of my recipes (notes tagged 'recipe') that take "
            f"{QUICK_LIMIT} minutes or less. Leave their other tags as they are.",
        ),
        "medium": (
            f"Every one of my recipes (the notes tagged 'recipe') in Simple Note that takes {QUICK_LIMIT} minutes or "
            "less should get the tag 'quick'; their other tags stay as they are.",
        ),
        "strong": (
            "Maya here, planning weeknight dinners. Whatever dish in my Simple Note collection labelled 'recipe' can "
            f"be made in {QUICK_LIMIT} minutes or less deserves an extra label, 'quick', on top of whatever labels it "
            "already carries, which shouldn't be touched.",
        ),
        "naturalistic": (
            "can u go thru my recipes in Simple Note (notes taged 'recipe') and add the tag 'quick' to the ones that "
            f"take {QUICK_LIMIT} minutes or less? dont mess w their other tags",
        ),
    },
    required_apps=("simple_note",),
    private_data={"quick_titles": QUICK_TITLES},
    solution=solution(LOGIN, f'''
    for recipe in recipes:
        note = apis.simple_note.show_note(note_id=recipe["note_id"], access_token=token)
        minutes = int(note["content"].split("Time:")[1].split("minutes")[0])
        if minutes <= {QUICK_LIMIT}:
            apis.simple_note.update_note(note_id=note["note_id"], tags=note["tags"] + ["quick"], access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert the only changed model is simple_note.Note.
    """, '''
        test.case(models.changed_model_names(), "==", {"simple_note.Note"})
    '''), check("no_op_fail", """
        assert exactly the quick recipes (private_data.quick_titles) were updated, each now tagged 'quick'
        in addition to its original tags.
    """, '''
        added, updated, removed = models.changed_records("simple_note.Note")
        test.case(sorted(note.title for note in updated), "==", private_data.quick_titles)
        originals = {note.id: note for note in models.start.simple_note.Note.all()}
        for note in updated:
            test.case(sorted(note.tags), "==", sorted(originals[note.id].tags + ["quick"]))
    '''), kept_rows_check("""
        assert no note was added or removed, no note outside the quick recipes was updated, and the
        updated notes kept their title and content.
    """, "simple_note.Note", changed_only=(), after='''
        test.case({note.title for note in updated} - set(private_data.quick_titles), "is_falsy")
        originals = {note.id: note for note in models.start.simple_note.Note.all()}
        for note in updated:
            test.case(note.content, "==", originals[note.id].content)
    ''')),
)

INDEX = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        "Create a Simple Note note titled 'Recipe Index' tagged 'index' whose content lists the titles of all "
        "my recipes (my notes tagged 'recipe'), one title per line, in alphabetical order."
    ),
    paraphrases={
        "mild": (
            "Make a Simple Note note with the title 'Recipe Index' and the tag 'index', whose content lists the titles "
            "of all my recipes (my notes tagged 'recipe'), one title per line, in alphabetical order.",
        ),
        "medium": (
            "Listing the titles of all my recipes (the notes tagged 'recipe'), one per line and in alphabetical order, "
            "create a new Simple Note note titled 'Recipe Index' with the tag 'index'.",
        ),
        "strong": (
            "It's Maya; my cooking notes are a mess. I'd love a table of contents: a fresh Simple Note entry called "
            "'Recipe Index', labelled 'index', whose body is simply the name of each note I've labelled 'recipe', "
            "sorted A to Z, a single name on each line.",
        ),
        "naturalistic": (
            "pls make a note in Simple Note called 'Recipe Index' w/ tag 'index' that lists the titles of all my "
            "recipies (notes tagged 'recipe'), one per line, alphabetical order",
        ),
    },
    required_apps=("simple_note",),
    private_data={"title": "Recipe Index", "tags": ["index"], "lines": sorted(title for title, _, _ in RECIPES)},
    solution=solution(LOGIN, '''
    titles = sorted(recipe["title"] for recipe in recipes)
    apis.simple_note.create_note(title="Recipe Index", content="\\n".join(titles), tags=["index"], access_token=token)
    apis.supervisor.complete_task()
'''),
    **action_checks(one_added_check("""
        assert exactly one note was added, owned by the user, titled 'Recipe Index' and tagged 'index'.
    """, "simple_note.Note", "note", more='''
        test.case(sorted(tag.lower() for tag in note.tags), "==", private_data.tags)
    '''), check("no_op_fail", """
        assert the new note's non-empty lines are all recipe titles, in alphabetical order.
    """, '''
        lines = [line.strip().lstrip("-*0123456789. ").strip() for line in note.content.splitlines()]
        test.case([line.lower() for line in lines if line], "==", [title.lower() for title in private_data.lines])
    '''), added_only_check("""
        assert no existing note was updated or removed and nothing outside simple_note.Note changed.
    """, "simple_note.Note")),
)

SCENARIO = ScenarioDef(
    scenario_id="f0a1c01",
    title="Recipe notes in Simple Note",
    split="train",
    apps=("simple_note",),
    seed_base=seed_base,
    tasks=(COUNT, TAG_QUICK, INDEX),
)
