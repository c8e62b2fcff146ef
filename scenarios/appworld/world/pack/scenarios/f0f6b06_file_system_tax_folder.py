"""Scenario f0f6b06 (dev): Maya's 2022 tax paperwork in the file system.

Seeds (per task): `~/documents/taxes_2022/` with 10 files in `forms/`, `receipts/` and the folder
itself, plus an empty `drafts/` subfolder (`show_directory` lists directories too, so counting all
entries overshoots); last year's `taxes_2021/` with a donation receipt; in `~/downloads/` two 1099
forms not yet filed, a blank W-9, concert tickets and a 2023 donation receipt.
Variants: count the files of the tax folder (question), total the 2022 donation receipts (question,
needs each file's content), file the downloaded 1099 forms and write an index (action).
"""

from __future__ import annotations

from pack.snippets import action_checks, check, kept_rows_check, login_preamble, question_checks, solution
from pack.types import ScenarioDef, SeedContext, TaskDef

HOME = "/home/maya/"
TAXES = HOME + "documents/taxes_2022/"
# (organization, date, amount) of the 2022 donation receipts, all in taxes_2022/receipts/.
DONATIONS = (
    ("donation_red_cross.txt", "American Red Cross", "2022-03-14", 150.00),
    ("donation_food_bank.txt", "Alameda County Food Bank", "2022-06-02", 75.50),
    ("donation_public_library.txt", "Oakland Public Library", "2022-09-21", 40.00),
    ("donation_animal_rescue.txt", "East Bay Animal Rescue", "2022-12-05", 112.25),
)
FORMS = ("w2_acme_corp.pdf", "1099_int_chase.pdf")
DOWNLOADED_1099 = ("1099_div_vanguard.pdf", "1099_b_robinhood.pdf")
DIRECTORIES = ("documents/taxes_2022/", "documents/taxes_2022/forms/", "documents/taxes_2022/receipts/",
               "documents/taxes_2022/drafts/", "documents/taxes_2021/", "documents/taxes_2021/receipts/")


def _receipt(organization: str, date: str, amount: float) -> str:
    return f"Donation receipt\nOrganization: {organization}\nDate: {date}\nAmount: ${amount:,.2f}\nTax deductible: yes\n"


def _files() -> dict[str, str]:
    """Path relative to Maya's home -> content."""
    files = {f"documents/taxes_2022/forms/{name}": f"FORM {name.split('_')[0].upper()} TAX YEAR 2022\n{name}"
             for name in FORMS}
    for name, organization, date, amount in DONATIONS:
        files[f"documents/taxes_2022/receipts/{name}"] = _receipt(organization, date, amount)
    files.update({
        "documents/taxes_2022/receipts/property_tax_receipt.txt":
            "Alameda County property tax\nDate: 2022-12-10\nAmount: $2,310.00\n",
        "documents/taxes_2022/receipts/dentist_invoice.txt": "Bright Smile Dental\nDate: 2022-08-19\nAmount: $180.00\n",
        "documents/taxes_2022/notes.txt": "Ask the accountant about the home office deduction.\n",
        "documents/taxes_2022/checklist.txt": "W-2\n1099s\ndonation receipts\nproperty tax\n",
        "documents/taxes_2021/receipts/donation_red_cross.txt": _receipt("American Red Cross", "2021-04-02", 120.0),
        "downloads/1099_div_vanguard.pdf": "FORM 1099-DIV TAX YEAR 2022\nVanguard dividends 412.88",
        "downloads/1099_b_robinhood.pdf": "FORM 1099-B TAX YEAR 2022\nRobinhood proceeds 1,904.10",
        "downloads/w9_blank_form.pdf": "FORM W-9 (blank)",
        "downloads/concert_tickets.pdf": "2 tickets - The Quiet Harbors - June 3",
        "downloads/donation_animal_shelter_2023.txt": _receipt("Berkeley Animal Shelter", "2023-05-02", 60.0),
    })
    return files


FILES = _files()
TAX_FILE_COUNT = len([path for path in FILES if path.startswith("documents/taxes_2022/")])
DONATION_TOTAL = round(sum(amount for _, _, _, amount in DONATIONS), 2)
INDEX_LINES = sorted(FORMS + DOWNLOADED_1099)


def seed_tax_folder(ctx: SeedContext) -> None:
    """Seeded per task (all three variants)."""
    fs = ctx.models.file_system
    maya = ctx.user("file_system", ctx.supervisor.key)
    for path in DIRECTORIES:
        fs.Directory.create_save(path=HOME + path, user_id=maya.id, created_at=ctx.at("2023-01-15T10:00:00"),
                                 updated_at=ctx.at("2023-01-15T10:00:00"))
    for index, (path, content) in enumerate(FILES.items()):
        when = ctx.at(f"2023-0{1 + index % 4}-{10 + index}T09:00:00")
        fs.File.create_save(path=HOME + path, user_id=maya.id, content=content, created_at=when, updated_at=when)


LOGIN = login_preamble("file_system")
QUESTION_CHECKS = question_checks("the expected answer about the user's tax folder")

COUNT_FILES = TaskDef(
    variant=1,
    difficulty=1,
    instruction=(
        "How many files are in my ~/documents/taxes_2022 folder, counting the files inside its subfolders too "
        "(but not the subfolders themselves)?"
    ),
    paraphrases={
        "mild": (
            "How many files does my ~/documents/taxes_2022 folder hold, counting the files in its subfolders as well "
            "(but not the subfolders themselves)?",
        ),
        "medium": (
            "Counting the files inside its subfolders too, but not the subfolders themselves, how many files are in my "
            "~/documents/taxes_2022 folder?",
        ),
        "strong": (
            "It's Maya, getting the tax paperwork together. Under ~/documents/taxes_2022, nested folders included, "
            "what total of actual files is there? Don't count the folders as items.",
        ),
        "naturalistic": (
            "how many files r in ~/documents/taxes_2022 incl the ones in subfolders (not counting the subfolders "
            "themselves)?",
        ),
    },
    answer=TAX_FILE_COUNT,
    required_apps=("file_system",),
    seed_task=seed_tax_folder,
    solution=solution(LOGIN, '''
    paths = apis.file_system.show_directory(
        directory_path="~/documents/taxes_2022/", entry_type="files", recursive=True, access_token=token
    )
    apis.supervisor.complete_task(answer=len(paths))
'''),
    **QUESTION_CHECKS,
)

DONATIONS_TOTAL = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        "My 2022 donation receipts are the files in ~/documents/taxes_2022/receipts whose names start with "
        "'donation_'; each one has an 'Amount:' line. How many dollars did I donate in total?"
    ),
    paraphrases={
        "mild": (
            "My 2022 donation receipts are the files in ~/documents/taxes_2022/receipts whose names begin with "
            "'donation_'; each has an 'Amount:' line. How many dollars did I donate in total?",
        ),
        "medium": (
            "How many dollars did I donate in total? My 2022 donation receipts are the files in "
            "~/documents/taxes_2022/receipts whose names start with 'donation_', each with an 'Amount:' line.",
        ),
        "strong": (
            "Maya here, claiming my charity deductions. Inside ~/documents/taxes_2022/receipts, the receipts for my "
            "2022 giving are whichever files are named starting 'donation_', and every one of them carries an "
            "'Amount:' line. Add those up for me in dollars.",
        ),
        "naturalistic": (
            "my 2022 donation receipts are the files in ~/documents/taxes_2022/receipts starting with 'donation_', "
            "each has an 'Amount:' line. how much did i donate total in dollars?",
        ),
    },
    answer=DONATION_TOTAL,
    required_apps=("file_system",),
    seed_task=seed_tax_folder,
    solution=solution(LOGIN, '''
    paths = apis.file_system.show_directory(
        directory_path="~/documents/taxes_2022/receipts/", entry_type="files", recursive=False, access_token=token
    )
    total = 0.0
    for path in paths:
        if path.rsplit("/", 1)[-1].startswith("donation_"):
            content = apis.file_system.show_file(file_path=path, access_token=token)["content"]
            for line in content.splitlines():
                if line.startswith("Amount:"):
                    total += float(line.split("$")[1].replace(",", ""))
    apis.supervisor.complete_task(answer=round(total, 2))
'''),
    **QUESTION_CHECKS,
)

FILE_FORMS = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        "Move the 1099 tax forms sitting in my ~/downloads folder into ~/documents/taxes_2022/forms, keeping "
        "their file names. Then create ~/documents/taxes_2022/forms/index.txt listing the file names (not full "
        "paths) of all the PDF files in that forms folder, one per line, in alphabetical order."
    ),
    paraphrases={
        "mild": (
            "Move the 1099 tax forms in my ~/downloads folder into ~/documents/taxes_2022/forms, keeping their file "
            "names. Then make ~/documents/taxes_2022/forms/index.txt listing the file names (not full paths) of all "
            "the PDF files in that forms folder, one per line, in alphabetical order.",
        ),
        "medium": (
            "Keeping their file names, move the 1099 tax forms from my ~/downloads folder into "
            "~/documents/taxes_2022/forms. After that, create ~/documents/taxes_2022/forms/index.txt with the file "
            "names (not full paths) of all the PDF files in that forms folder, in alphabetical order, one per line.",
        ),
        "strong": (
            "It's Maya, filing season. The 1099 forms I grabbed are lying in ~/downloads; relocate them, names "
            "unchanged, to ~/documents/taxes_2022/forms. Afterwards write ~/documents/taxes_2022/forms/index.txt "
            "naming every PDF in that folder, bare names rather than paths, sorted A to Z, a single name on each line.",
        ),
        "naturalistic": (
            "move the 1099 tax forms from my ~/downloads into ~/documents/taxes_2022/forms (keep the file names). then "
            "make ~/documents/taxes_2022/forms/index.txt listing the file names (not full paths) of all the PDF files "
            "in that folder, one per line, alphabetical",
        ),
    },
    required_apps=("file_system",),
    seed_task=seed_tax_folder,
    private_data={
        "moved": {HOME + "downloads/" + name: TAXES + "forms/" + name for name in DOWNLOADED_1099},
        "index_path": TAXES + "forms/index.txt",
        "index_lines": INDEX_LINES,
    },
    solution=solution(LOGIN, '''
    downloads = apis.file_system.show_directory(
        directory_path="~/downloads/", entry_type="files", recursive=False, access_token=token
    )
    for path in downloads:
        name = path.rsplit("/", 1)[-1]
        if name.startswith("1099"):
            apis.file_system.move_file(
                source_file_path=path, destination_file_path="~/documents/taxes_2022/forms/" + name, access_token=token
            )
    forms = apis.file_system.show_directory(
        directory_path="~/documents/taxes_2022/forms/", entry_type="files", recursive=False, access_token=token
    )
    names = sorted(path.rsplit("/", 1)[-1] for path in forms if path.endswith(".pdf"))
    apis.file_system.create_file(
        file_path="~/documents/taxes_2022/forms/index.txt", content="\\n".join(names), access_token=token
    )
    apis.supervisor.complete_task()
'''),
    **action_checks(check("no_op_fail", """
        assert each downloaded 1099 form now exists only in the forms folder (private_data.moved maps old to
        new path), with its content unchanged.
    """, '''
        maya = models.end.file_system.User.find_from(main_user)
        for source, destination in private_data.moved.items():
            before = models.start.file_system.File.find_one(user_id=maya.id, path=source)
            after = models.end.file_system.File.find_one(user_id=maya.id, path=destination)
            test.case(after is not None, "==", True)
            test.case(after.content, "==", before.content)
            test.case(models.end.file_system.File.find_one(user_id=maya.id, path=source), "is", None)
    '''), check("no_op_fail", """
        assert index.txt exists in the forms folder and its non-empty lines are exactly the PDF file names
        of the folder (private_data.index_lines), in alphabetical order.
    """, '''
        maya = models.end.file_system.User.find_from(main_user)
        index = models.end.file_system.File.find_one(user_id=maya.id, path=private_data.index_path)
        test.case(index is not None, "==", True)
        lines = [line.strip() for line in index.content.splitlines() if line.strip()]
        test.case(lines, "==", private_data.index_lines)
    '''), kept_rows_check("""
        assert no directory was added, removed or renamed, the only files removed are the two downloaded 1099
        forms, the only files added are their moved copies and index.txt, no other file changed and nothing
        outside the file system's files and directories changed.
    """, "file_system.Directory", changed_only=("file_system.File", "file_system.Directory"), before='''
        added, updated, removed = models.changed_records("file_system.File")
        test.case({f.path for f in removed} - set(private_data.moved.keys()), "is_falsy")
        test.case({f.path for f in added} - set(private_data.moved.values()) - {private_data.index_path}, "is_falsy")
        test.case(len(updated), "==", 0)
    ''', after='''
        originals = {directory.id: directory.path for directory in models.start.file_system.Directory.all()}
        test.case([d.path for d in updated if d.path != originals[d.id]], "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0f6b06",
    title="Tax paperwork in the file system",
    split="dev",
    apps=("file_system",),
    tasks=(COUNT_FILES, DONATIONS_TOTAL, FILE_FORMS),
)
