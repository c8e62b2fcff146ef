"""Scenario f0c3e03 (train): Maya's liked songs and song library on Spotify.

Seeds (per task, so no other scenario sees them): two new artists, Juniper Vale (10 songs) and
Brass Meridian (5 songs, one titled 'Juniper Lane' to trap title matching). Maya likes 14 songs
(three pages of `show_liked_songs` at the default page size, newest like first: only one Juniper
Vale song on page 0) and has 7 more songs in her library (after the 8 base ones: pages 1-2).
Variants: count her liked Juniper Vale songs (question), name her most played liked song (question,
needs `show_song` per song; the winner is the oldest like, on the last page), build a playlist from
the Juniper Vale songs in her likes or library (action).
"""

from __future__ import annotations

from pack.snippets import (
    action_checks, block, check, login_preamble, one_added_check, paginate, question_checks, solution,
)
from pack.types import ScenarioDef, SeedContext, TaskDef

JUNIPER = "Juniper Vale"
BRASS = "Brass Meridian"
# (title, artist, play_count, duration in seconds)
SONGS = (
    ("Cedar Smoke", JUNIPER, 184200, 214), ("Lantern Bay", JUNIPER, 96500, 241),
    ("Harbor of Moths", JUNIPER, 22100, 198), ("Ashby Road", JUNIPER, 143800, 263),
    ("Low Tide Hymn", JUNIPER, 61200, 305), ("Paper Boats at Dawn", JUNIPER, 18700, 187),
    ("Kettle and Rain", JUNIPER, 233400, 226), ("The Orchard Gate", JUNIPER, 412600, 252),
    ("Salt on the Window", JUNIPER, 77300, 279), ("Fieldstone", JUNIPER, 35100, 201),
    ("Copper Hours", BRASS, 120400, 318), ("Blue Tram", BRASS, 298500, 244),
    ("Sixth Street Shuffle", BRASS, 54800, 197), ("Late Ferry", BRASS, 87600, 289),
    ("Juniper Lane", BRASS, 266900, 233),
)
# Maya's likes, newest first (the API's default order). "base:N" is the N-th song of the base catalog.
LIKES = (
    ("Blue Tram", "2023-05-16T21:00:00"), ("Cedar Smoke", "2023-05-15T08:30:00"), ("base:4", "2023-05-14T19:00:00"),
    ("Juniper Lane", "2023-05-13T07:45:00"), ("base:17", "2023-05-12T22:10:00"), ("Lantern Bay", "2023-05-10T18:00:00"),
    ("Late Ferry", "2023-05-09T12:00:00"), ("Ashby Road", "2023-05-07T09:15:00"), ("base:29", "2023-05-05T20:40:00"),
    ("Low Tide Hymn", "2023-05-03T17:05:00"), ("Copper Hours", "2023-04-28T23:00:00"),
    ("Kettle and Rain", "2023-04-25T06:50:00"), ("base:41", "2023-04-20T15:30:00"),
    ("The Orchard Gate", "2023-04-11T10:00:00"),
)
LIBRARY_ADDITIONS = ("Lantern Bay", "Sixth Street Shuffle", "Salt on the Window", "Juniper Lane", "Fieldstone",
                     "Smoke Rings", "Cedar Smoke")
EXTRA_SONGS = (("Smoke Rings", BRASS, 43100, 176),)

ARTIST_OF = {title: artist for title, artist, _, _ in SONGS + EXTRA_SONGS}
LIKED_JUNIPER = sorted(title for title, _ in LIKES if ARTIST_OF.get(title) == JUNIPER)
PICKS = sorted(set(LIKED_JUNIPER) | {title for title in LIBRARY_ADDITIONS if ARTIST_OF.get(title) == JUNIPER})
MOST_PLAYED = max((title for title, _ in LIKES if title in ARTIST_OF),
                  key=lambda title: next(p for t, _, p, _ in SONGS if t == title))


def seed_liked_songs(ctx: SeedContext) -> None:
    """Seeded per task (all three variants): the catalog additions and Maya's likes and library."""
    spotify = ctx.models.spotify
    maya = ctx.user("spotify", ctx.supervisor.key)
    base_songs = sorted(spotify.Song.all(), key=lambda song: song.id)
    songs = {}
    for name, genre, album_title, released in ((JUNIPER, "folk", "Lanterns Over Ashby", "2022-09-16T00:00:00"),
                                               (BRASS, "jazz", "Copper Hours (Live)", "2021-03-05T00:00:00")):
        artist = spotify.Artist.create_save(name=name, genre=genre, created_at=ctx.at("2023-01-05T10:00:00"))
        album = spotify.Album.create_save(title=album_title, artist_ids=[artist.id], genre=genre,
                                          release_date=ctx.at(released), rating=4.3)
        for title, artist_name, plays, duration in SONGS + EXTRA_SONGS:
            if artist_name == name:
                songs[title] = spotify.Song.create_save(
                    title=title, artist_ids=[artist.id], album_id=album.id, genre=genre, duration=duration,
                    release_date=ctx.at(released), play_count=plays, rating=4.1,
                )
    for title, when in LIKES:
        song = base_songs[int(title[5:])] if title.startswith("base:") else songs[title]
        spotify.SongLike.create_save(user_id=maya.id, song_id=song.id, liked_at=ctx.at(when))
    for index, title in enumerate(LIBRARY_ADDITIONS):
        spotify.UserLibrarySong.create_save(user_id=maya.id, song_id=songs[title].id,
                                            created_at=ctx.at(f"2023-05-{10 + index:02d}T20:00:00"))


LOGIN = login_preamble("spotify") + paginate("liked", "spotify.show_liked_songs")

QUESTION_CHECKS = question_checks("the expected answer about the user's liked songs")

COUNT_JUNIPER = TaskDef(
    variant=1,
    difficulty=1,
    instruction=f"How many of the songs I've liked on Spotify are by {JUNIPER}?",
    paraphrases={
        "mild": (f"How many of the songs I have liked on Spotify are by the artist {JUNIPER}?",),
        "medium": (f"Of the songs I've liked on Spotify, how many are by {JUNIPER}?",),
        "strong": (
            f"It's Maya, I think I'm a bit obsessed with {JUNIPER}. Among the tracks I've hearted on Spotify, what "
            "number are that artist's?",
        ),
        "naturalistic": (f"how many of my liked songs on spotify are {JUNIPER} ones?",),
    },
    answer=len(LIKED_JUNIPER),
    required_apps=("spotify",),
    seed_task=seed_liked_songs,
    solution=solution(LOGIN, '''
    count = 0
    for song in liked:
        if "Juniper Vale" in [artist["name"] for artist in song["artists"]]:
            count += 1
    apis.supervisor.complete_task(answer=count)
'''),
    **QUESTION_CHECKS,
)

MOST_PLAYED_LIKED = TaskDef(
    variant=2,
    difficulty=2,
    instruction="Which of the songs I've liked on Spotify has been played the most times? Just tell me its title.",
    paraphrases={
        "mild": ("Which of my liked songs on Spotify has been played the most times? Just give me its title.",),
        "medium": (
            "Of the songs I've liked on Spotify, which has been played the most times? Only its title, please.",
        ),
        "strong": (
            "Maya here, curious about my habits. Among the tracks I've hearted on Spotify, which one has the highest "
            "play count? The name of the track is all I want.",
        ),
        "naturalistic": ("which of my liked songs on spotify has the most plays? just the title",),
    },
    answer=MOST_PLAYED,
    required_apps=("spotify",),
    seed_task=seed_liked_songs,
    solution=solution(LOGIN, '''
    best_title, best_plays = None, -1
    for song in liked:
        details = apis.spotify.show_song(song_id=song["song_id"])
        if details["play_count"] > best_plays:
            best_title, best_plays = details["title"], details["play_count"]
    apis.supervisor.complete_task(answer=best_title)
'''),
    **QUESTION_CHECKS,
)

PICKS_PLAYLIST = TaskDef(
    variant=3,
    difficulty=3,
    instruction=(
        f"Create a new private Spotify playlist titled '{JUNIPER} Picks' containing every {JUNIPER} song that is "
        "in my song library or among my liked songs (each song once). Don't add any other songs."
    ),
    paraphrases={
        "mild": (
            f"Make a new private Spotify playlist titled '{JUNIPER} Picks' containing every {JUNIPER} song that is in "
            "my song library or among my liked songs (each song once). Don't add other songs.",
        ),
        "medium": (
            f"Every {JUNIPER} song in my song library or among my liked songs should go, each once, into a new private "
            f"Spotify playlist titled '{JUNIPER} Picks'. No other songs.",
        ),
        "strong": (
            f"It's Maya, and I want a {JUNIPER} corner. Start a fresh Spotify playlist, private, called '{JUNIPER} "
            "Picks', and fill it with that artist's tracks from what I've saved or hearted, no repeats, and nobody "
            "else's music.",
        ),
        "naturalistic": (
            f"make a new private playlist on Spotify called '{JUNIPER} Picks' w/ every {JUNIPER} song from my library "
            "or my liked songs (each once). no other songs pls",
        ),
    },
    required_apps=("spotify",),
    seed_task=seed_liked_songs,
    private_data={"title": f"{JUNIPER} Picks", "song_titles": PICKS},
    solution=solution(LOGIN, block(paginate("library", "spotify.show_song_library"), '''
    song_ids = []
    for song in liked + library:
        if "Juniper Vale" in [artist["name"] for artist in song["artists"]] and song["song_id"] not in song_ids:
            song_ids.append(song["song_id"])
    playlist_id = apis.spotify.create_playlist(title="Juniper Vale Picks", is_public=False, access_token=token)[
        "playlist_id"
    ]
    for song_id in song_ids:
        apis.spotify.add_song_to_playlist(playlist_id=playlist_id, song_id=song_id, access_token=token)
    apis.supervisor.complete_task()
''')),
    **action_checks(one_added_check("""
        assert exactly one playlist was added, owned by the user, titled 'Juniper Vale Picks' and private.
    """, "spotify.Playlist", "playlist", more='''
        test.case(playlist.is_public, "==", False)
    '''), check("no_op_fail", """
        assert the new playlist holds exactly the Juniper Vale songs of the user's likes and library
        (private_data.song_titles), and no song was added to any other playlist.
    """, '''
        added_songs = models.changed_records("spotify.PlaylistSong")[0]
        test.case({row.playlist_id for row in added_songs}, "==", {playlist.id})
        titles = sorted(models.end.spotify.Song.find_one(id=row.song_id).title for row in added_songs)
        test.case(titles, "==", sorted(private_data.song_titles))
    '''), check("no_op_pass", """
        assert no existing playlist or playlist song was updated or removed, and nothing outside
        spotify.Playlist and spotify.PlaylistSong changed (likes and library untouched).
    """, '''
        for model_name in ("spotify.Playlist", "spotify.PlaylistSong"):
            added, updated, removed = models.changed_records(model_name)
            test.case(len(updated) + len(removed), "==", 0)
        test.case(models.changed_model_names() - {"spotify.Playlist", "spotify.PlaylistSong"}, "is_falsy")
    ''')),
)

SCENARIO = ScenarioDef(
    scenario_id="f0c3e03",
    title="Liked songs and library on Spotify",
    split="train",
    apps=("spotify",),
    tasks=(COUNT_JUNIPER, MOST_PLAYED_LIKED, PICKS_PLAYLIST),
)
