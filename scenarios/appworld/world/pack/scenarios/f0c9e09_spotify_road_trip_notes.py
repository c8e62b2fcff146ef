"""Scenario f0c9e09 (dev): Spotify songs and playlists, written up in Simple Note.

Seeds (every variant's own world, via `seed_task`): two new artists, Wren Calloway (9 songs) and
Tidewater Youth (6 songs, including the near-duplicate title 'Overpass (Live)'). Maya's song library
gets 11 of them after her 8 base songs (pages 1-3 of `show_song_library` at the default page size:
no Wren Calloway song on page 0); she gets six new playlists, 'Road Trip 2023' last (page 1 of
`show_playlist_library`); Emma has an older, liked public playlist with the same title, which
`search_playlists` returns before Maya's. A Simple Note note 'Road trip song ideas'
lists four song titles, one of them already in the playlist.
Variants: count Wren Calloway songs in my library (question, paginated), write a note listing the
playlist's songs, add the songs of the note to the playlist.
"""

from __future__ import annotations

from pack.snippets import (
    NULL_ANSWER_CHECK, action_checks, added_only_check, block, check, checks, login, login_preamble, one_added_check,
    page_loop, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

WREN, TIDEWATER = "Wren Calloway", "Tidewater Youth"
ARTISTS = ((WREN, "folk", "Northbound Letters", "2022-10-07T00:00:00"),
           (TIDEWATER, "indie", "Parking Lot Stars", "2021-06-18T00:00:00"))
SONGS = {
    WREN: ("Harbor Bell", "Low Tide Waltz", "The Long Way North", "Kettle Song", "Ferry at Dawn", "Orchard Rain",
           "Lantern Hill", "Weathervane", "Birch Light"),
    TIDEWATER: ("Static Summer", "Parking Lot Stars", "Overpass", "Cassette Heart", "Gas Station Roses",
                "Overpass (Live)"),
}
ARTIST_OF = {title: artist for artist, titles in SONGS.items() for title in titles}
LIBRARY_ADDITIONS = ("Static Summer", "Harbor Bell", "Low Tide Waltz", "Parking Lot Stars", "The Long Way North",
                     "Ferry at Dawn", "Overpass", "Kettle Song", "Orchard Rain", "Cassette Heart", "Birch Light")
LIBRARY_WREN_COUNT = sum(1 for title in LIBRARY_ADDITIONS if ARTIST_OF[title] == WREN)
LIKED_ONLY = ("Weathervane",)  # a Wren Calloway song Maya likes but has not added to her library

PLAYLIST = "Road Trip 2023"
# Maya's new playlists, in creation order (the playlist library lists them after her base 'Maya's Mix').
PLAYLISTS = (
    ("Focus Mornings", ("Birch Light", "Static Summer")),
    ("Sunday Cleaning", ("Cassette Heart", "Gas Station Roses")),
    ("Rainy Day Folk", ("Harbor Bell", "Low Tide Waltz", "Orchard Rain")),
    ("Gym Rotation", ("Overpass (Live)", "Parking Lot Stars")),
    ("Dinner Party", ("Ferry at Dawn",)),
    (PLAYLIST, ("Lantern Hill", "Parking Lot Stars", "Low Tide Waltz", "Gas Station Roses", "Ferry at Dawn",
                "Static Summer", "Weathervane")),
)
ROAD_TRIP_SONGS = dict(PLAYLISTS)[PLAYLIST]
EMMA_ROAD_TRIP = ("Overpass", "Cassette Heart", "Harbor Bell")
EMMA_PLAYLIST_LIKERS = ("ben", "chloe", "diego")
IDEAS_NOTE = "Road trip song ideas"
IDEAS = ("Cassette Heart", "Lantern Hill", "Kettle Song", "Overpass")
IDEAS_TO_ADD = sorted(title for title in IDEAS if title not in ROAD_TRIP_SONGS)
LIST_NOTE = "Road Trip 2023 Songs"


def seed_music(ctx: SeedContext) -> None:
    spotify = ctx.models.spotify
    maya = ctx.user("spotify", ctx.supervisor.key)
    songs = {}
    for name, genre, album_title, released in ARTISTS:
        artist = spotify.Artist.create_save(name=name, genre=genre, created_at=ctx.at("2023-01-08T10:00:00"))
        album = spotify.Album.create_save(title=album_title, artist_ids=[artist.id], genre=genre,
                                          release_date=ctx.at(released), rating=4.2)
        for index, title in enumerate(SONGS[name]):
            songs[title] = spotify.Song.create_save(
                title=title, artist_ids=[artist.id], album_id=album.id, genre=genre, duration=180 + 9 * index,
                release_date=ctx.at(released), play_count=1200 * (index + 3), rating=4.0,
            )
    for index, title in enumerate(LIBRARY_ADDITIONS):
        spotify.UserLibrarySong.create_save(user_id=maya.id, song_id=songs[title].id,
                                            created_at=ctx.at(f"2023-05-{2 + index:02d}T21:00:00"))
    for title in LIKED_ONLY:
        spotify.SongLike.create_save(user_id=maya.id, song_id=songs[title].id, liked_at=ctx.at("2023-05-14T09:00:00"))
    # Emma's playlist first: on equal search relevance `search_playlists` returns the lower id first.
    emma = ctx.user("spotify", "emma")
    playlist = spotify.Playlist.create_save(title=PLAYLIST, user_id=emma.id, is_public=True,
                                            created_at=ctx.at("2023-04-02T12:00:00"))
    for song_title in EMMA_ROAD_TRIP:
        spotify.PlaylistSong.create_save(playlist_id=playlist.id, song_id=songs[song_title].id)
    for key in EMMA_PLAYLIST_LIKERS:  # a popular public playlist
        spotify.PlaylistLike.create_save(user_id=ctx.user("spotify", key).id, playlist_id=playlist.id,
                                         liked_at=ctx.at("2023-04-09T12:00:00"))
    for index, (title, titles) in enumerate(PLAYLISTS):
        playlist = spotify.Playlist.create_save(title=title, user_id=maya.id, is_public=index % 2 == 0,
                                                created_at=ctx.at(f"2023-04-{10 + 3 * index:02d}T19:00:00"))
        for song_title in titles:
            spotify.PlaylistSong.create_save(playlist_id=playlist.id, song_id=songs[song_title].id,
                                             added_at=ctx.at(f"2023-04-{10 + 3 * index:02d}T19:30:00"))
    ctx.models.simple_note.Note.create_save(
        user_id=ctx.user("simple_note", ctx.supervisor.key).id, title=IDEAS_NOTE, content="\n".join(IDEAS) + "\n",
        tags=["music"], created_at=ctx.at("2023-05-06T22:00:00"),
    )


SPOTIFY_LOGIN = login_preamble("spotify")

FIND_PLAYLIST = block(paginate("playlists", "spotify.show_playlist_library"), f'''
    playlist_id = [p for p in playlists if p["title"] == "{PLAYLIST}"][0]["playlist_id"]
    playlist = apis.spotify.show_playlist(playlist_id=playlist_id, access_token=token)
''')

NOTE_LOGIN = login("simple_note", "email", token="note_token")


COUNT_WREN = TaskDef(
    variant=1,
    difficulty=1,
    instruction=f"How many songs by {WREN} are in my Spotify song library?",
    paraphrases={
        "mild": (f"How many songs by {WREN} does my Spotify song library contain?",),
        "medium": (f"In my Spotify song library, how many songs are by {WREN}?",),
        "strong": (
            f"Maya here. {WREN} has been on repeat; what count of that artist's tracks have I saved to my Spotify "
            "collection?",
        ),
        "naturalistic": (f"how many {WREN} songs r in my spotify library?",),
    },
    answer=LIBRARY_WREN_COUNT,
    required_apps=("spotify",),
    seed_task=seed_music,
    solution=solution(SPOTIFY_LOGIN, block(
        "    count = 0",
        page_loop("spotify.show_song_library", body=f'''
    count += sum(1 for song in page if "{WREN}" in [artist["name"] for artist in song["artists"]])
'''),
        "    apis.supervisor.complete_task(answer=count)",
    )),
    **question_checks(f"the number of songs by {WREN} in the user's song library"),
)

LIST_PLAYLIST = TaskDef(
    variant=2,
    difficulty=2,
    instruction=(
        f"Create a note in Simple Note titled '{LIST_NOTE}' that lists the titles of all the songs in my Spotify "
        f"playlist '{PLAYLIST}', one title per line."
    ),
    paraphrases={
        "mild": (
            f"Make a note in Simple Note titled '{LIST_NOTE}' listing the titles of all the songs in my Spotify "
            f"playlist '{PLAYLIST}', one title per line.",
        ),
        "medium": (
            f"Listing the titles of all the songs in my Spotify playlist '{PLAYLIST}', one per line, create a note in "
            f"Simple Note titled '{LIST_NOTE}'.",
        ),
        "strong": (
            "It's Maya; I want the tracklist written down for the car. Copy the name of every track on the Spotify "
            f"playlist called '{PLAYLIST}' into a fresh Simple Note entry called '{LIST_NOTE}', a single name on each "
            "line.",
        ),
        "naturalistic": (
            f"can u make a Simple Note note called '{LIST_NOTE}' w/ the titles of every song in my spotify playlist "
            f"'{PLAYLIST}', one per line",
        ),
    },
    required_apps=("simple_note", "spotify"),
    seed_task=seed_music,
    private_data={"title": LIST_NOTE, "songs": sorted(ROAD_TRIP_SONGS)},
    solution=solution(SPOTIFY_LOGIN, FIND_PLAYLIST, NOTE_LOGIN, f'''
    titles = [song["title"] for song in playlist["songs"]]
    apis.simple_note.create_note(title="{LIST_NOTE}", content="\\n".join(titles), access_token=note_token)
    apis.supervisor.complete_task()
'''),
    **action_checks(one_added_check("""
        assert exactly one note was added, owned by the user, with the requested title.
    """, "simple_note.Note", "note"), check("no_op_fail", """
        assert the new note's non-empty lines are exactly the titles of the songs in the user's playlist
        (private_data.songs), each once, in any order.
    """, '''
        lines = [line.strip().lstrip("-*0123456789.) ").strip() for line in note.content.splitlines()]
        test.case(sorted(line.lower() for line in lines if line), "==", [title.lower() for title in private_data.songs])
    '''), added_only_check("""
        assert no existing note was updated or removed and nothing outside simple_note.Note changed.
    """, "simple_note.Note")),
)

ADD_IDEAS = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"My Simple Note note '{IDEAS_NOTE}' lists song titles, one per line. Add each of those songs to my "
        f"Spotify playlist '{PLAYLIST}', skipping any that are already in it."
    ),
    paraphrases={
        "mild": (
            f"My Simple Note note '{IDEAS_NOTE}' lists song titles, one on each line. Add each of those songs to my "
            f"Spotify playlist '{PLAYLIST}', skipping any that it already contains.",
        ),
        "medium": (
            f"Add to my Spotify playlist '{PLAYLIST}' each song listed (one title per line) in my Simple Note note "
            f"'{IDEAS_NOTE}', skipping any that are already in the playlist.",
        ),
        "strong": (
            "Maya here, prepping the drive. I jotted track names, a single one on each line, in the Simple Note entry "
            f"called '{IDEAS_NOTE}'; get whichever of them aren't yet on the Spotify list '{PLAYLIST}' onto it.",
        ),
        "naturalistic": (
            f"my Simple Note note '{IDEAS_NOTE}' has song titles (one per line). pls add them to my spotify playlist "
            f"'{PLAYLIST}', skip the ones alredy in there",
        ),
    },
    required_apps=("simple_note", "spotify"),
    seed_task=seed_music,
    private_data={"playlist": PLAYLIST, "added": IDEAS_TO_ADD},
    solution=solution(SPOTIFY_LOGIN, FIND_PLAYLIST, NOTE_LOGIN, f'''
    found = apis.simple_note.search_notes(query="{IDEAS_NOTE}", page_limit=20, access_token=note_token)
    note_id = [n for n in found if n["title"] == "{IDEAS_NOTE}"][0]["note_id"]
    note = apis.simple_note.show_note(note_id=note_id, access_token=note_token)
    present = {{song["title"] for song in playlist["songs"]}}
    for title in [line.strip() for line in note["content"].splitlines() if line.strip()]:
        if title in present:
            continue
        results = apis.spotify.search_songs(query=title, page_limit=20, access_token=token)
        song = [s for s in results if s["title"] == title][0]
        apis.spotify.add_song_to_playlist(playlist_id=playlist_id, song_id=song["song_id"], access_token=token)
    apis.supervisor.complete_task()
'''),
    **checks('''
    maya = models.end.spotify.User.find_from(main_user)
    playlist = models.end.spotify.Playlist.find_one(user_id=maya.id, title=private_data.playlist)
''', NULL_ANSWER_CHECK, check("no_op_fail", """
        assert the songs added to playlists are exactly the note's songs missing from the user's playlist
        (private_data.added), each added once, all to that playlist.
    """, '''
        added, updated, removed = models.changed_records("spotify.PlaylistSong")
        titles = sorted(models.end.spotify.Song.find_one(id=entry.song_id).title for entry in added)
        test.case(titles, "==", private_data.added)
        test.case({entry.playlist_id for entry in added}, "==", {playlist.id})
    '''), added_only_check("""
        assert no song was removed from any playlist, and nothing but playlist songs changed (the note included).
    """, "spotify.PlaylistSong")),
)

SCENARIO = ScenarioDef(
    scenario_id="f0c9e09",
    title="Road trip songs: Spotify and Simple Note",
    split="dev",
    apps=("spotify", "simple_note"),
    tasks=(COUNT_WREN, LIST_PLAYLIST, ADD_IDEAS),
)
