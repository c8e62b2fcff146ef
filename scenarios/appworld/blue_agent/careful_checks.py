"""The careful Blue's knowledge of how to read whether a write happened: one check per write the task pack calls.

A careful agent whose write got no answer (HTTP 504, or an answer cut short) reads the app's state before it
repeats the write: a write that happened and is repeated happens twice (two notes, two payments), and AppWorld's
tests fail the task. This table is the stand-in's version of that knowledge, written for the state-changing APIs
the shipped task pack's reference solutions call (`scenarios/appworld/world/pack/scenarios/`), each read from the
world's API docs and tried against the real world (tests/test_careful_blue_e2e.py). A write with no entry here is
repeated once, blindly (`blue_agent.careful_policy`).

`CHECKS["<app>.<api>"] = (snapshot, found)`:
- `snapshot(apis, kwargs)`: None, or a function reading the state the write will change, called before the write
  (only where a plain predicate cannot tell: a create, an append, a count);
- `found(apis, kwargs, before)`: the write's success-like answer if the state shows it happened (its message,
  and the id a create returns: a solution may use it, as f0c3e03_3 uses `create_playlist`'s `playlist_id`), else
  None. `apis` is the policy's `CarefulApis`: `read` (retried) and `look` (None when the app says "not there").

Self-contained for the same reason as the policy: its text runs in code mode's REPL too (no imports).
"""

PAGE_LIMIT = 20
MAX_PAGES = 50


def _pages(apis, app, api, **kwargs):
    """Every item of a paginated list, page after page until a short one."""
    items = []
    for page_index in range(MAX_PAGES):
        page = apis.read(app, api, page_index=page_index, page_limit=PAGE_LIMIT, **kwargs)
        items += page
        if len(page) < PAGE_LIMIT:
            break
    return items


def _same(shown, wanted):
    """A shown value equals a value a write set (a date set as YYYY-MM-DD shows with a time; a list in any order)."""
    if isinstance(wanted, list) and isinstance(shown, list):
        return sorted(map(str, shown)) == sorted(map(str, wanted))
    if isinstance(wanted, str) and isinstance(shown, str):
        return shown == wanted or shown.startswith(wanted + "T")
    if isinstance(wanted, float) and isinstance(shown, (int, float)):
        return abs(shown - wanted) < 0.005
    return shown == wanted


def _shows(shown, kwargs, ignored=("access_token",)):
    """The shown object has every value the write set (arguments left None set nothing)."""
    return shown is not None and all(_same(shown.get(key), value) for key, value in kwargs.items()
                                     if key not in ignored and value is not None)


def _done(message, **ids):
    return dict(message=message + " (confirmed by reading it back)", **ids)


def _new(ids, before):
    """The ids a create added: the matching ones not there before."""
    added = [i for i in ids if i not in before]
    return added[-1] if added else None


# --- amazon ------------------------------------------------------------------------------------------------------

def _cart(apis, kwargs):
    cart = apis.read("amazon", "show_cart", access_token=kwargs["access_token"])
    return sum(item["quantity"] for item in cart["cart_items"] if item["product_id"] == kwargs["product_id"])


def _cart_and_wish_list(apis, kwargs):
    wished = apis.read("amazon", "show_wish_list", access_token=kwargs["access_token"])
    return _cart(apis, kwargs), sum(i["quantity"] for i in wished if i["product_id"] == kwargs["product_id"])


def _added_to_cart(apis, kwargs, before):
    return _done("Product/s added to the cart.") if _cart(apis, kwargs) != before else None


def _moved_to_cart(apis, kwargs, before):
    if _cart_and_wish_list(apis, kwargs) == before:
        return None
    return _done(f"{int(kwargs.get('quantity', 1))} product/s moved from the wish list to the cart.")


# --- file_system -------------------------------------------------------------------------------------------------

def _file_created(apis, kwargs, before):
    shown = apis.look("file_system", "show_file", file_path=kwargs["file_path"], access_token=kwargs["access_token"])
    if shown is None or shown["content"] != kwargs.get("content", ""):
        return None
    return _done("File created.", file_path=shown["path"])


def _file_moved(apis, kwargs, before):
    token = kwargs["access_token"]
    moved = apis.look("file_system", "show_file", file_path=kwargs["destination_file_path"], access_token=token)
    left = apis.read("file_system", "file_exists", file_path=kwargs["source_file_path"], access_token=token)
    return None if moved is None or left["exists"] else _done("File moved.", destination_file_path=moved["path"])


# --- gmail -------------------------------------------------------------------------------------------------------

def _thread(apis, kwargs):
    return apis.read("gmail", "show_thread", email_thread_id=kwargs["email_thread_id"],
                     access_token=kwargs["access_token"])


def _labelled(apis, kwargs, before):
    return _done("Email thread labeled.") if _thread(apis, kwargs)["label"] == kwargs["label"] else None


def _archived(apis, kwargs, before):
    return _done("Email thread marked as archived.") if _thread(apis, kwargs)["archived"] is True else None


def _replies(apis, kwargs):
    return [email["email_id"] for email in _thread(apis, kwargs)["emails"] if email["body"] == kwargs["body"]]


def _replied(apis, kwargs, before):
    added = _new(_replies(apis, kwargs), before)
    return None if added is None else _done("Reply email sent.", sent_email_id=added)


# --- phone -------------------------------------------------------------------------------------------------------

def _alarms(apis, kwargs):
    return [a["alarm_id"] for a in _pages(apis, "phone", "show_alarms", access_token=kwargs["access_token"])
            if a["time"] == kwargs["time"] and a["label"] == kwargs.get("label")]


def _alarm_created(apis, kwargs, before):
    added = _new(_alarms(apis, kwargs), before)
    return None if added is None else _done("Alarm created successfully.", alarm_id=added)


def _alarm_updated(apis, kwargs, before):
    shown = apis.look("phone", "show_alarm", alarm_id=kwargs["alarm_id"], access_token=kwargs["access_token"])
    return _done("Alarm updated successfully.") if _shows(shown, kwargs) else None


def _texts(apis, kwargs):
    """The messages with that text among the newest with that number (a new one is the newest)."""
    window = apis.read("phone", "show_text_message_window", phone_number=kwargs["phone_number"],
                       page_limit=PAGE_LIMIT, access_token=kwargs["access_token"])
    return [m["text_message_id"] for m in window if m["message"] == kwargs["message"]]


def _texted(apis, kwargs, before):
    added = _new(_texts(apis, kwargs), before)
    return None if added is None else _done("Text message sent.", text_message_id=added)


# --- simple_note -------------------------------------------------------------------------------------------------

def _note(apis, kwargs):
    return apis.look("simple_note", "show_note", note_id=kwargs["note_id"], access_token=kwargs["access_token"])


def _note_content(apis, kwargs):
    note = apis.read("simple_note", "show_note", note_id=kwargs["note_id"], access_token=kwargs["access_token"])
    return note["content"]


def _content_added(apis, kwargs, before):
    return _done(f"Content {kwargs['append_or_prepend']}ed to note.") if _note_content(apis, kwargs) != before else None


def _notes(apis, kwargs):
    found = _pages(apis, "simple_note", "search_notes", query=kwargs["title"], access_token=kwargs["access_token"])
    return [note["note_id"] for note in found if note["title"] == kwargs["title"]]


def _note_created(apis, kwargs, before):
    added = _new(_notes(apis, kwargs), before)
    return None if added is None else _done("Note created.", note_id=added)


def _note_deleted(apis, kwargs, before):
    return _done("Note deleted.") if _note(apis, kwargs) is None else None


def _note_updated(apis, kwargs, before):
    return _done("Note updated.") if _shows(_note(apis, kwargs), kwargs) else None


# --- splitwise ---------------------------------------------------------------------------------------------------

def _expenses(apis, kwargs):
    token, group = kwargs["access_token"], kwargs.get("group_id")
    listed = (_pages(apis, "splitwise", "show_group_expenses", group_id=group, access_token=token)
              if group is not None else _pages(apis, "splitwise", "show_no_group_expenses", access_token=token))
    return [e["expense_id"] for e in listed
            if e["description"] == kwargs["description"] and _same(e["paid_amount"], float(kwargs["paid_amount"]))]


def _expense_recorded(apis, kwargs, before):
    added = _new(_expenses(apis, kwargs), before)
    return None if added is None else _done("Expense recorded.", expense_id=added)


# --- spotify -----------------------------------------------------------------------------------------------------

def _song_added(apis, kwargs, before):
    playlist = apis.read("spotify", "show_playlist", playlist_id=kwargs["playlist_id"],
                         access_token=kwargs["access_token"])
    return _done("Song added to the playlist.") if kwargs["song_id"] in [s["id"] for s in playlist["songs"]] else None


def _playlists(apis, kwargs):
    library = _pages(apis, "spotify", "show_playlist_library", access_token=kwargs["access_token"])
    return [p["playlist_id"] for p in library if p["title"] == kwargs["title"]]


def _playlist_created(apis, kwargs, before):
    added = _new(_playlists(apis, kwargs), before)
    return None if added is None else _done("Playlist created.", playlist_id=added)


# --- todoist -----------------------------------------------------------------------------------------------------

def _task(apis, kwargs):
    return apis.look("todoist", "show_task", task_id=kwargs["task_id"], access_token=kwargs["access_token"])


def _project_tasks(apis, project_id, token, **filters):
    listing = apis.read("todoist", "show_tasks", project_id=project_id, access_token=token, **filters)
    return listing["no_section_tasks"] + [task for section in listing["sections"] for task in section["tasks"]]


def _assigned(apis, kwargs, before):
    task = _task(apis, kwargs)
    email = kwargs.get("assignee_email")
    if task is None:
        return None
    if email is None:
        return _done("Task unassigned.") if task["assignee_id"] is None else None
    assigned = _project_tasks(apis, task["project_id"], kwargs["access_token"], assignee_email=email)
    return _done("Task assigned.") if kwargs["task_id"] in [t["task_id"] for t in assigned] else None


def _titled_tasks(apis, kwargs):
    tasks = _project_tasks(apis, kwargs["project_id"], kwargs["access_token"])
    return [task["task_id"] for task in tasks if task["title"] == kwargs["title"]]


def _task_created(apis, kwargs, before):
    added = _new(_titled_tasks(apis, kwargs), before)
    return None if added is None else _done("Task created.", task_id=added)


def _task_updated(apis, kwargs, before):
    return _done("Task information updated.") if _shows(_task(apis, kwargs), kwargs) else None


# --- venmo -------------------------------------------------------------------------------------------------------

def _approved(apis, kwargs, before):
    approved = _pages(apis, "venmo", "show_received_payment_requests", status="approved",
                      access_token=kwargs["access_token"])
    wanted = kwargs["payment_request_id"]
    return _done("Payment request approved.") if wanted in [r["payment_request_id"] for r in approved] else None


def _requests(apis, kwargs):
    sent = _pages(apis, "venmo", "show_sent_payment_requests", access_token=kwargs["access_token"])
    return [r["payment_request_id"] for r in sent if r["receiver"]["email"] == kwargs["user_email"]
            and _same(r["amount"], float(kwargs["amount"])) and r["description"] == kwargs.get("description", "")]


def _requested(apis, kwargs, before):
    added = _new(_requests(apis, kwargs), before)
    return None if added is None else _done("Payment request created.", payment_request_id=added)


def _transactions(apis, kwargs):
    sent = _pages(apis, "venmo", "show_transactions", user_email=kwargs["receiver_email"], direction="sent",
                  access_token=kwargs["access_token"])
    return [t["transaction_id"] for t in sent
            if _same(t["amount"], float(kwargs["amount"])) and t["description"] == kwargs.get("description", "")]


def _paid(apis, kwargs, before):
    added = _new(_transactions(apis, kwargs), before)
    return None if added is None else _done("Sent money.", transaction_id=added)


CHECKS = {
    "amazon.add_product_to_cart": (_cart, _added_to_cart),
    "amazon.move_product_from_wish_list_to_cart": (_cart_and_wish_list, _moved_to_cart),
    "file_system.create_file": (None, _file_created),
    "file_system.move_file": (None, _file_moved),
    "gmail.label_thread": (None, _labelled),
    "gmail.mark_thread_archived": (None, _archived),
    "gmail.reply_to_email": (_replies, _replied),
    "phone.create_alarm": (_alarms, _alarm_created),
    "phone.send_text_message": (_texts, _texted),
    "phone.update_alarm": (None, _alarm_updated),
    "simple_note.add_content_to_note": (_note_content, _content_added),
    "simple_note.create_note": (_notes, _note_created),
    "simple_note.delete_note": (None, _note_deleted),
    "simple_note.update_note": (None, _note_updated),
    "splitwise.record_expense": (_expenses, _expense_recorded),
    "spotify.add_song_to_playlist": (None, _song_added),
    "spotify.create_playlist": (_playlists, _playlist_created),
    "todoist.assign_or_unassign_task": (None, _assigned),
    "todoist.create_task": (_titled_tasks, _task_created),
    "todoist.update_task": (None, _task_updated),
    "venmo.approve_payment_request": (None, _approved),
    "venmo.create_payment_request": (_requests, _requested),
    "venmo.create_transaction": (_transactions, _paid),
}
"""`"<app>.<api>"` -> `(snapshot, found)` (module docstring)."""
