"""The inspector on other agents' files: the panels the format has, named as the agent names them; a table
browser for anything else; the agent's own ranking in the search panel; a key asked for an encrypted file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

from oxmem_gui.ui.main_window import PANELS
from tests.core.formats import fixtures
from tests.ui.conftest import settle


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return fixtures.write_all(tmp_path_factory.mktemp("formats"))


def open_as_demo(files, name, tmp_path):
    """The fixture at the path ``make_window`` opens (it keeps an existing file)."""
    shutil.copy(files[name], tmp_path / "demo.db")


def rows(path, sql: str, args: tuple = ()) -> list[tuple]:
    """Rows read by another process, as the agent would see them: an in-process connection of another SQLite
    library would drop the inspector's own locks on the file when it closes (POSIX locks are per process)."""
    code = (
        "import json, sqlite3, sys; conn = sqlite3.connect(sys.argv[1]); "
        "print(json.dumps(conn.execute(sys.argv[2], json.loads(sys.argv[3])).fetchall())); conn.close()"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path), sql, json.dumps(list(args))], check=True,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    return [tuple(r) for r in json.loads(done.stdout)]


def nav(window):
    """Each panel's label and whether it can be chosen."""
    return {
        name: (window.nav.item(i).text(), bool(window.nav.item(i).flags() & Qt.ItemFlag.ItemIsEnabled))
        for i, name in enumerate(PANELS)
    }


def test_an_unknown_sqlite_file_opens_as_a_table_browser(make_window, qloop, files, tmp_path):
    open_as_demo(files, "unknown", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    assert nav(window) == {
        "sessions": ("Sessions", False),
        "notes": ("Notes", False),
        "search": ("Search", False),
        "schedules": ("Schedules", False),
        "tables": ("Tables", True),
    }
    assert window.current_panel() == "tables"
    assert window.windowTitle() == "demo.db — SQLite database — oxmem"
    assert not window.enable_button.isVisible() and not window.enable_action.isEnabled()
    tables = window.tables
    names = [tables.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(tables.list.count())]
    first = names[0]
    assert tables.current == first and tables.model.columnCount() > 0
    assert dialogs.errors == []


def test_table_rows_load_a_page_at_a_time_and_never_show_another_tables_rows(make_window, qloop, files, tmp_path):
    open_as_demo(files, "unknown", tmp_path)
    window, ctx, _ = make_window(read_only=True)
    settle(qloop, ctx)
    tables = window.tables
    infos = qloop.run_until_complete(ctx.store.tables())
    big = max(infos, key=lambda t: t.rows or 0)
    assert big.rows > 200
    assert tables.select_table(big.name)
    settle(qloop, ctx)
    assert tables.model.rowCount() == 200 and tables.more.isEnabled()
    tables.load_more()
    settle(qloop, ctx)
    assert tables.model.rowCount() == min(big.rows, 400)
    assert tables.more.isEnabled() == (big.rows > 400)
    other = next(t for t in infos if t.name != big.name and t.kind == "table")
    tables.select_table(other.name)
    tables.select_table(big.name)  # a quick change back and forth: only the last table's rows are shown
    settle(qloop, ctx)
    assert tables.current == big.name and tables.model.rowCount() == 200


def test_omega_panels_are_named_as_the_agent_names_them_and_search_runs_its_recall(make_window, qloop, files, tmp_path):
    open_as_demo(files, "omega", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    labels = nav(window)
    assert labels["sessions"] == ("Conversations", True)
    assert labels["notes"] == ("Facts", True)
    assert window.windowTitle() == "demo.db — Omega memory — oxmem"
    assert window.sessions.sessions_view.model().rowCount() == 5
    search = window.search
    ranking = search.current_ranking()
    assert ranking is not None and ranking.name == "omega-recall" and not ranking.tunable
    assert not search.controls.weight.isEnabled() and not search.controls.mode.isEnabled()
    search.controls.session.setCurrentText(fixtures.OMEGA_CONVERSATIONS["current"])
    search.controls.query.setText("dentist appointment")
    search.search()
    settle(qloop, ctx)
    assert search.state.result.retriever == "omega-recall"
    assert [h.chunk_id for h in search.state.result.hits] == [fixtures.OMEGA_MESSAGES[1]]
    assert search.explain_view.toPlainText().startswith("Rank 1 of 1")
    search.controls.weight.setValue(10)  # the agent's ranking is fixed: nothing is re-weighted
    assert [h.chunk_id for h in search.state.result.hits] == [fixtures.OMEGA_MESSAGES[1]]
    assert dialogs.errors == []


def test_about_this_database_describes_the_file(make_window, qloop, files, tmp_path):
    open_as_demo(files, "zeke", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.database_info()
    settle(qloop, ctx)
    ((title, text),) = dialogs.reports
    assert title == "About demo.db"
    assert "zeke (ZEKE memory)" in text.splitlines()[0]
    assert any(line.startswith("memories ") and " 26 " in line for line in text.splitlines())
    assert "journal delete" in text


def test_an_encrypted_file_asks_for_its_key(make_window, qloop, files, tmp_path):
    window, ctx, dialogs = make_window(read_only=True)
    dialogs.secrets = ["0" * 64, fixtures.AIDAEMON_KEY]  # a wrong key first: asked again
    window.open_path(str(files["aidaemon-encrypted"]))
    settle(qloop, ctx)
    settle(qloop, ctx)
    assert ctx.store.format == "aidaemon"
    assert window.windowTitle() == "aidaemon-encrypted.db — aidaemon memory — oxmem"
    assert window.mode_label.text() == "Read-only snapshot"  # decrypted in memory: it does not follow new writes
    assert dialogs.errors == []


def test_aidaemon_facts_are_edited_in_the_encrypted_file_with_its_key(
    make_window, qloop, files, tmp_path, backups_in_tmp
):
    """The key asked once; Enable Editing takes an encrypted backup; an edit is a new version in the encrypted
    file; aidaemon superseding the fact meanwhile is theirs beside mine; undo; the episodes stay read-only."""
    from tests.core.formats.test_aidaemon_facts import INSERT, NOW, SUPERSEDE, the_agent
    from tests.core.formats.test_aidaemon_facts import rows as read

    key = fixtures.AIDAEMON_KEY
    path = tmp_path / "agent" / "aidaemon.db"
    path.parent.mkdir()
    shutil.copy(files["aidaemon-encrypted"], path)
    listing = sorted(p.name for p in path.parent.iterdir())
    window, ctx, dialogs = make_window(read_only=True)
    dialogs.secrets = [key]
    window.open_path(str(path))
    settle(qloop, ctx)
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    assert not ctx.read_only and window.mode_label.text() == "Editing"
    (backup,) = backups_in_tmp.glob("*.db")
    assert not backup.read_bytes().startswith(b"SQLite format 3")  # still encrypted, under the same key
    assert read(backup, "SELECT count(*) FROM facts", key=key) == [(7,)]
    window.show_panel("notes")
    notes = window.notes
    notes.set_user("user")
    settle(qloop, ctx)
    assert (notes.list_pane.count_label.text(), notes.list_pane.filter.placeholderText()) == (
        "2 facts",
        "Filter facts by text…",
    )
    row = next(i for i, n in enumerate(notes.model.notes) if n.content.startswith("timezone:"))
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    notes.editor.content.setPlainText("timezone: Asia/Tokyo")
    notes.save()
    settle(qloop, ctx)
    active = "SELECT id, value FROM facts WHERE key = 'timezone' AND superseded_at IS NULL"
    assert read(path, active, key=key) == [(8, "Asia/Tokyo")] and not notes.dirty()
    assert notes.state.current.note_id == "fact:8"
    seoul = ("user", "timezone", "Asia/Seoul", "agent", NOW, NOW, None, "global", None)
    the_agent(path, (SUPERSEDE, (NOW, 8)), (INSERT, seoul), key=key)  # aidaemon's upsert, meanwhile
    notes.editor.content.setPlainText("timezone: UTC")
    dialogs.conflict_answers = ["theirs"]
    notes.save()
    settle(qloop, ctx)
    (asked,) = dialogs.conflicts
    assert asked["theirs"].startswith("timezone: Asia/Seoul") and asked["mine"].startswith("timezone: UTC")
    assert read(path, active, key=key) == [(9, "Asia/Seoul")]
    notes.editor.content.setPlainText("timezone: UTC")
    notes.save()
    settle(qloop, ctx)
    assert read(path, active, key=key) == [(10, "UTC")]
    notes.undo()
    settle(qloop, ctx)
    assert read(path, active, key=key) == [(11, "Asia/Seoul")]  # undo: the value before, as one more version
    assert read(path, "SELECT count(*) FROM facts WHERE key = 'timezone'", key=key) == [(7,)]
    notes.set_user("episodes")
    settle(qloop, ctx)
    assert not notes.editor.new_button.isEnabled()
    assert notes.editor.new_button.toolTip().startswith("aidaemon writes its episodes only from its own consolidation")
    assert sorted(p.name for p in path.parent.iterdir()) == listing  # no plaintext copy, no sidecar
    assert dialogs.errors == []


def test_newer_oxydra_schedules_can_be_read_with_its_weekday_numbering(make_window, qloop, files, tmp_path):
    open_as_demo(files, "oxydra-libsql", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    panel = window.schedules
    window.show_panel("schedules")
    settle(qloop, ctx)
    assert panel.list_pane.sunday_one.isVisibleTo(window)

    def cadence_of(name):
        model = panel.list_pane.list_view.model()
        for row in range(model.rowCount()):
            if model.index(row, 0).data().endswith(name):
                return model.index(row, 2).data()
        raise AssertionError(name)

    assert cadence_of("Monday plan") == "every Monday at 08:00 Europe/Berlin ⓘ"
    panel.list_pane.sunday_one.setChecked(True)
    settle(qloop, ctx)
    assert cadence_of("Monday plan") == "every Sunday at 08:00 Europe/Berlin ⓘ"
    assert cadence_of("Friday wrap-up") == "every Friday at 17:00 Europe/Berlin"
    assert dialogs.errors == []


def test_a_note_is_saved_in_the_agents_libsql_file_through_the_libsql_engine(
    make_window, qloop, files, tmp_path, backups_in_tmp
):
    """Enable Editing re-opens the file read-write without writing a byte of oxmem's schema into it; a note saved
    from the editor goes through libSQL (its vector index stays sound); closing leaves no sidecar. The file is
    hashed in another process while the inspector has it open (closing a descriptor here would drop its locks)."""
    from tests.core.test_libsql_writer import healthy, through_libsql

    def digest() -> str:
        code = "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())"
        return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip

    open_as_demo(files, "oxydra-libsql", tmp_path)
    path = tmp_path / "demo.db"
    before = digest()
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    assert not ctx.read_only and digest() == before
    (backup,) = backups_in_tmp.glob("*.db")  # taken first, with the vector index's shadow tables
    assert through_libsql(backup)["integrity"] == ["ok"]
    state = through_libsql(path)
    window.show_panel("notes")
    notes = window.notes
    notes.set_user("alice")
    settle(qloop, ctx)
    assert notes.editor.new_button.isEnabled()
    notes.new_note()
    notes.editor.content.setPlainText("Alice's bike is at the Gare de Lyon racks")
    notes.save()
    settle(qloop, ctx)
    assert notes.state.current is not None and notes.state.current.content.startswith("Alice's bike")
    assert [n.note_id for n in notes.model.notes].count(notes.state.current.note_id) == 1
    assert healthy(path, state)["chunks"] == state["chunks"] + 1
    qloop.run_until_complete(ctx.close())
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("demo.db")) == ["demo.db"]
    assert dialogs.errors == []


def test_omega_facts_are_edited_after_enable_editing_with_a_backup_and_theirs_beside_mine(
    make_window, qloop, files, tmp_path, backups_in_tmp
):
    from tests.core.formats.test_omega_facts import STORE_FACT, the_agent

    open_as_demo(files, "omega", tmp_path)
    path = tmp_path / "demo.db"
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    assert not ctx.read_only
    (backup,) = backups_in_tmp.glob("*.db")
    assert rows(backup, "SELECT count(*) FROM facts") == [(12,)]
    window.show_panel("notes")
    notes = window.notes
    notes.set_user("4242")
    settle(qloop, ctx)
    assert notes.editor.tags.is_read_only() and not notes.list_pane.bulk_add.isEnabled()
    assert (
        notes.list_pane.bulk_add.toolTip() == "Omega memory: its facts have no tags"
        and notes.list_pane.place_button.isHidden()
    )
    row = next(i for i, n in enumerate(notes.model.notes) if n.content.startswith("dentist:"))
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    assert notes.editor.heading.text() == "Fact “dentist: Dr. Moreau, Rue Oberkampf”"  # the format's own words
    assert (notes.list_pane.count_label.text(), notes.list_pane.filter.placeholderText()) == (
        "6 facts",
        "Filter facts by text…",
    )
    notes.editor.content.setPlainText("dentist: Dr. Lemaire")
    notes.save()
    settle(qloop, ctx)

    def value() -> str:
        return rows(path, "SELECT value FROM facts WHERE sender_id = '4242' AND key = 'dentist'")[0][0]

    assert value() == "Dr. Lemaire" and not notes.dirty()
    the_agent(path, STORE_FACT, ("new-id", "4242", "dentist", "Dr. Petit"))  # Omega itself, meanwhile
    notes.editor.content.setPlainText("dentist: Dr. Martin")
    dialogs.conflict_answers = ["theirs"]
    notes.save()
    settle(qloop, ctx)
    (asked,) = dialogs.conflicts
    assert asked["theirs"].startswith("dentist: Dr. Petit") and asked["mine"].startswith("dentist: Dr. Martin")
    assert value() == "Dr. Petit" and notes.editor.content.toPlainText() == "dentist: Dr. Petit"
    assert dialogs.errors == []


def test_a_closed_omega_conversation_is_deleted_from_the_session_browser(make_window, qloop, files, tmp_path):
    open_as_demo(files, "omega", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    panel = window.sessions
    assert not panel.delete_button.isEnabled()  # read-only until editing is enabled
    assert panel.delete_button.text() == "Delete conversation…"  # the format's word
    window.enable_editing()
    settle(qloop, ctx)
    dentist = fixtures.OMEGA_CONVERSATIONS["dentist"]
    assert panel.select_session(dentist)
    settle(qloop, ctx)
    assert panel.delete_button.isEnabled()
    panel.delete_selected()
    settle(qloop, ctx)
    (asked,) = dialogs.confirms
    assert asked.startswith(f"Delete conversation “{dentist}”?\n\nThis removes it with its 4 messages;")
    assert rows(tmp_path / "demo.db", "SELECT count(*) FROM conversations WHERE id = ?", (dentist,)) == [(0,)]
    assert rows(tmp_path / "demo.db", "SELECT count(*) FROM messages") == [(18,)]
    assert dentist not in [r.session_id for r in panel.sessions.rows] and dialogs.errors == []


def test_an_omega_task_is_cancelled_from_the_schedules_panel_in_omegas_words(make_window, qloop, files, tmp_path):
    open_as_demo(files, "omega", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    window.show_panel("schedules")
    panel = window.schedules
    settle(qloop, ctx)
    plants = fixtures.OMEGA_TASKS["plants"]
    panel.select(plants)
    settle(qloop, ctx)
    assert panel.list_pane.pause_button.text() == "Cancel task" and panel.list_pane.pause_button.isEnabled()
    assert not panel.list_pane.delete_button.isEnabled() and not panel.list_pane.new_button.isEnabled()
    assert (
        panel.list_pane.delete_button.toolTip()
        == "Omega never deletes a task: cancel it instead (its row stays, cancelled)."
    )
    panel.set_status("paused")
    settle(qloop, ctx)
    assert rows(tmp_path / "demo.db", "SELECT status FROM scheduled_tasks WHERE id = ?", (plants,)) == [("cancelled",)]
    assert not panel.list_pane.resume_button.isEnabled() and panel.list_pane.resume_button.toolTip().startswith(
        "Omega never makes"
    )
    assert dialogs.errors == []


def test_zeke_memories_are_edited_after_enable_editing(make_window, qloop, files, tmp_path):
    open_as_demo(files, "zeke", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.enable_editing()
    settle(qloop, ctx)
    window.show_panel("notes")
    notes = window.notes
    notes.set_user("notes")
    settle(qloop, ctx)
    assert not notes.editor.tags.is_read_only() and notes.list_pane.count_label.text() == "5 memories"
    bike = fixtures.ZEKE_IDS["n-bike"]
    row = next(i for i, n in enumerate(notes.model.notes) if n.note_id == bike)
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    notes.editor.content.setPlainText("Bike lock code: ask Dana, not the neighbours")
    notes.save()
    settle(qloop, ctx)
    assert rows(tmp_path / "demo.db", "SELECT text, embedding FROM memories WHERE id = ?", (bike,)) == [
        ("Bike lock code: ask Dana, not the neighbours", None)  # OpenAI's model cannot run here: no vector, as
    ]  # ZEKE leaves it when it cannot embed
    assert "embedding dims: none" in notes.editor.details.text() and dialogs.errors == []


def notes_of(make_window, qloop, user):
    """The inspector, read-only, on the file ``make_window`` opens, showing the notes of ``user``."""
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    window.show_panel("notes")
    window.notes.set_user(user)
    settle(qloop, ctx)
    return window, ctx, dialogs, window.notes


def zeke_memories(make_window, qloop, files, tmp_path):
    """The inspector, read-only, on a copy of the ZEKE fixture, showing the scope ``notes``."""
    open_as_demo(files, "zeke", tmp_path)
    return notes_of(make_window, qloop, "notes")


def test_zekes_eviction_is_applied_from_its_preview_after_confirming_the_count(make_window, qloop, files, tmp_path):
    from tests.core.formats.test_omega_facts import the_agent

    window, ctx, dialogs, notes = zeke_memories(make_window, qloop, files, tmp_path)

    def count() -> int:
        return rows(tmp_path / "demo.db", "SELECT count(*) FROM memories")[0][0]

    dialogs.report_answer = True
    notes.eviction_preview()
    settle(qloop, ctx)
    (title, text, columns, listed_rows), action = dialogs.tables[-1], dialogs.report_actions[-1]
    listed = int(text.split("would delete ")[1].split()[0])
    assert listed >= len(fixtures.ZEKE_EXPIRED) and len(listed_rows) == listed
    assert (title, columns) == ("Eviction preview", ("Id", "Group", "Rule", "Last used", "Text"))
    assert {fixtures.ZEKE_IDS["t-invoice-old"]} <= {row[0] for row in listed_rows}
    assert action is None and "Not deleted from here: enable editing (Edit ▸ Enable Editing)" in text
    assert count() == 26 and dialogs.confirms == []

    window.enable_editing()
    settle(qloop, ctx)
    # ZEKE's own evictor deletes one of them between the preview and the confirmation: nothing is deleted
    answer = dialogs.confirm
    gone = ("DELETE FROM memories WHERE id = ?", (fixtures.ZEKE_IDS["t-invoice-old"],))
    dialogs.confirm = lambda *a: the_agent(tmp_path / "demo.db", *gone) or answer(*a)
    notes.eviction_preview()
    settle(qloop, ctx)
    assert dialogs.report_actions[-1] == f"Delete these {listed} memories…"
    assert dialogs.confirms[-1].startswith(f"Delete {listed} memories now, as the agent's own clean-up would")
    assert count() == 25 and f"not the {listed} confirmed; nothing was deleted" in dialogs.errors[-1]
    dialogs.confirm = answer
    notes.eviction_preview()
    settle(qloop, ctx)
    assert dialogs.report_actions[-1] == f"Delete these {listed - 1} memories…"
    assert count() == 26 - listed and notes.state.undo_record is not None
    notes.undo()
    settle(qloop, ctx)
    assert count() == 25 and len(dialogs.errors) == 1


def test_a_zeke_memory_is_moved_and_given_a_ttl_then_undone(make_window, qloop, files, tmp_path):
    window, ctx, dialogs, notes = zeke_memories(make_window, qloop, files, tmp_path)
    bike = fixtures.ZEKE_IDS["n-bike"]

    def place() -> tuple:
        return rows(tmp_path / "demo.db", "SELECT scope, ttl_seconds FROM memories WHERE id = ?", (bike,))[0]

    assert not notes.list_pane.place_button.isHidden() and notes.list_pane.place_button.text() == "Scope && TTL…"
    row = next(i for i, n in enumerate(notes.model.notes) if n.note_id == bike)
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    assert not notes.list_pane.place_button.isEnabled()  # read-only: the reason is the tooltip
    assert (
        notes.list_pane.place_button.toolTip()
        == "Read-only: choose Edit ▸ Enable Editing (Ctrl+E) first; a backup is taken."
    )
    window.enable_editing()
    settle(qloop, ctx)
    row = next(i for i, n in enumerate(notes.model.notes) if n.note_id == bike)
    notes.list_pane.view.setCurrentIndex(notes.model.index(row, 0))
    assert notes.list_pane.place_button.isEnabled()
    dialogs.texts = ["task:home", "abc"]  # a TTL that is no number: one dialog, nothing written
    notes.edit_place()
    settle(qloop, ctx)
    assert place() == ("notes", None) and "whole number of seconds" in dialogs.errors[-1]
    dialogs.texts = ["task:home", "3600"]
    notes.edit_place()
    settle(qloop, ctx)
    assert place() == ("task:home", 3600) and notes.state.current is None
    assert "task:home" in [notes.list_pane.user_box.itemText(i) for i in range(notes.list_pane.user_box.count())]
    notes.undo()
    settle(qloop, ctx)
    assert place() == ("notes", None) and len(dialogs.errors) == 1


def test_an_omega_conversation_is_closed_and_reopened_from_the_session_browser(make_window, qloop, files, tmp_path):
    open_as_demo(files, "omega", tmp_path)
    path = tmp_path / "demo.db"
    current, dentist = fixtures.OMEGA_CONVERSATIONS["current"], fixtures.OMEGA_CONVERSATIONS["dentist"]

    def status(conversation: str) -> str:
        return rows(path, "SELECT status FROM conversations WHERE id = ?", (conversation,))[0][0]

    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    panel = window.sessions
    assert panel.select_session(current)
    settle(qloop, ctx)
    button = panel.open_button
    assert not button.isHidden() and button.accessibleName() == "Close conversation" and not button.isEnabled()
    window.enable_editing()
    settle(qloop, ctx)
    assert panel.select_session(current)
    settle(qloop, ctx)
    assert button.isEnabled()
    button.click()
    settle(qloop, ctx)
    assert status(current) == "closed" and button.text() == "Reopen"
    assert panel.select_session(dentist)
    settle(qloop, ctx)
    button.click()
    settle(qloop, ctx)
    assert status(dentist) == "active" and button.text() == "Close"
    assert panel.select_session(current)  # 4242 has an open conversation again: one dialog, nothing written
    settle(qloop, ctx)
    button.click()
    settle(qloop, ctx)
    assert status(current) == "closed" and f"open conversation here ({dentist})" in dialogs.errors[-1]


def test_a_large_zeke_scope_is_listed_a_page_at_a_time(make_window, qloop, tmp_path):
    """450 memories in one scope: the list holds the first 200 and says more follow; scrolling to its end reads
    the next page (and the next), until every memory is listed once, in the order the whole list has; an
    export without a selection writes every memory, also those not yet scrolled to."""
    fixtures.make_zeke(tmp_path / "demo.db", "384", extra_per_scope={"persona": 450})
    window, ctx, dialogs, notes = notes_of(make_window, qloop, "persona")
    assert (
        len(notes.model.notes) == 200 and notes.list_pane.count_label.text() == "200 memories so far · scroll for more"
    )
    target = tmp_path / "export.json"
    dialogs.files.append(target)
    notes.export()
    settle(qloop, ctx)
    assert len(json.loads(target.read_text())) == 450 and len(notes.model.notes) == 200
    for listed in (400, 450):
        assert notes.model.canFetchMore() is True

        async def scroll():  # the view asks for more (fetchMore) when it is scrolled to the end
            notes.list_pane.view.scrollToBottom()

        qloop.run_until_complete(scroll())
        settle(qloop, ctx)
        assert len(notes.model.notes) == listed
    assert notes.model.canFetchMore() is False and notes.list_pane.count_label.text() == "450 memories"
    whole = qloop.run_until_complete(ctx.store.list_notes("persona"))
    assert [n.note_id for n in notes.model.notes] == [n.note_id for n in whole]
    # a note selected further down than the list reaches (an edit moved it there) is read up to and selected
    notes.set_user("notes")
    settle(qloop, ctx)
    notes.set_user("persona")
    settle(qloop, ctx)
    assert len(notes.model.notes) == 200
    notes.reload(select=whole[350].note_id)
    settle(qloop, ctx)
    assert len(notes.model.notes) == 400 and notes.state.current.note_id == whole[350].note_id
    assert notes.list_pane.view.currentIndex().row() == 350 and notes.editor.content.toPlainText() == whole[350].content
    assert dialogs.errors == []


def test_facts_are_listed_in_the_formats_words_without_an_always_empty_tags_column(make_window, qloop, files, tmp_path):
    """aidaemon's facts have no tags: no Tags column, tag filter or tag editor (they were always empty), the filter
    speaks of facts, and a detail with no value reads "—" rather than "None" (last recalled at: never)."""
    open_as_demo(files, "aidaemon", tmp_path)
    window, ctx, dialogs, notes = notes_of(make_window, qloop, "preference")
    assert notes.list_pane.filter.placeholderText() == "Filter facts by text…"
    assert notes.list_pane.view.isColumnHidden(1) and not notes.list_pane.view.isColumnHidden(0)
    assert notes.model.headerData(0, Qt.Orientation.Horizontal) == "Fact"
    hidden = (
        notes.list_pane.tag_filter,
        notes.list_pane.tag_mode,
        notes.editor.tags,
        notes.editor.tags_label,
        notes.list_pane.bulk_add,
        notes.list_pane.bulk_remove,
    )
    assert [w.isVisibleTo(window) for w in hidden] == [False] * len(hidden)
    fact = next(i for i, n in enumerate(notes.model.notes) if n.details.get("last_recalled_at") is None)
    notes.list_pane.view.setCurrentIndex(notes.model.index(fact, 0))
    settle(qloop, ctx)
    assert "last recalled at: —" in notes.editor.details.text() and "None" not in notes.editor.details.text()
    assert notes.list_pane.count_label.text().endswith("facts") and dialogs.errors == []
    # a format whose notes have tags shows them all again
    open_as_demo(files, "zeke", tmp_path)
    qloop.run_until_complete(ctx.open(tmp_path / "demo.db", read_only=True, embedding="deterministic"))
    settle(qloop, ctx)
    assert (
        not notes.list_pane.view.isColumnHidden(1)
        and notes.list_pane.filter.placeholderText() == "Filter memories by text…"
    )
    assert notes.model.headerData(0, Qt.Orientation.Horizontal) == "Memory"
    assert [w.isVisibleTo(window) for w in hidden] == [True] * len(hidden)


def test_omega_conversations_can_be_told_apart_by_a_label_first(make_window, qloop, files, tmp_path):
    """Every Omega row showed the same cut-off uuid prefix: a row now starts with what a person tells
    conversations apart by (status · channel · sender · started), then the id shortened to its first and last 8
    characters; the whole id is in the tooltip and what the row is selected by."""
    open_as_demo(files, "omega", tmp_path)
    window, ctx, dialogs = make_window(read_only=True)
    settle(qloop, ctx)
    model = window.sessions.sessions
    shown = [model.data(model.index(r, 0)) for r in range(model.rowCount())]
    ids = [model.rows[r].session_id for r in range(model.rowCount())]
    panel = window.sessions
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Conversation"
    assert panel.filter.placeholderText() == "Filter conversations by id…"
    assert panel.header.text() == "No conversation selected"
    started = model.rows[0].created_at[:16].replace("T", " ")
    assert shown[0] == f"active · telegram · 4242 · {started}  ·  0b7e2a10…00000003" and ids[0].endswith("00000003")
    assert len({s[:45] for s in shown}) == len(shown)  # apart even when the column shows only the label
    assert all(ids[r] in model.data(model.index(r, 0), Qt.ItemDataRole.ToolTipRole) for r in range(len(ids)))
    assert dialogs.errors == []


def test_import_and_reindex_are_not_offered_where_the_format_never_allows_them(make_window, qloop, files, tmp_path):
    """Import Events and Re-index were enabled on another agent's file (an encrypted aidaemon snapshot among
    them) and then refused: they are disabled there, saying why in the status tip; on oxmem's own store they are
    offered once editing is enabled (Ctrl+I was enabled read-only and then refused), the tip saying how."""
    window, ctx, dialogs = make_window(read_only=True)
    assert not window.import_action.isEnabled() and not window.reindex_action.isEnabled()
    assert window.import_action.statusTip().startswith("Read-only: choose Edit ▸ Enable Editing (Ctrl+E) first")
    window.enable_editing()
    settle(qloop, ctx)
    assert window.import_action.isEnabled() and window.reindex_action.isEnabled()
    shutil.copy(files["aidaemon"], tmp_path / "aidaemon.db")
    qloop.run_until_complete(ctx.open(tmp_path / "aidaemon.db", read_only=True, embedding="deterministic"))
    settle(qloop, ctx)
    assert not window.import_action.isEnabled() and not window.reindex_action.isEnabled()
    assert window.import_action.statusTip().startswith("aidaemon memory: aidaemon appends its events")
    assert dialogs.errors == []


def test_a_zeke_memory_says_before_saving_that_it_gets_no_vector_until_an_endpoint_is_named(
    make_window, qloop, files, tmp_path
):
    """In a file of OpenAI vectors the editor says, before saving, that the memory will be saved without a vector;
    Edit ▸ Embeddings Endpoint… (saying what is sent, the key only from the environment) takes an endpoint, and
    the hint goes; a URL holding a key is refused in one dialog and nothing is saved."""
    from oxmem_gui.core.embeddings import endpoint

    window, ctx, dialogs, notes = zeke_memories(make_window, qloop, files, tmp_path)
    assert notes.editor.hint.isHidden()  # read-only: nothing will be saved
    window.enable_editing()
    settle(qloop, ctx)
    hint = window.notes.editor.hint
    assert not hint.isHidden() and hint.text().startswith(
        "The memory is saved without a vector — oxmem cannot make text-embedding-3-small vectors here"
    )
    try:
        dialogs.texts = ["http://user:sk-SECRET@localhost:11434/v1"]
        window.embeddings_endpoint()
        assert dialogs.errors == [endpoint.CREDENTIALS] and window.settings.value("embeddings/url") is None
        dialogs.texts = ["http://127.0.0.1:9/v1"]
        window.embeddings_endpoint()
        settle(qloop, ctx)
        assert endpoint.configured() == endpoint.Endpoint("http://127.0.0.1:9/v1", endpoint.configured().key)
        assert window.settings.value("embeddings/url") == "http://127.0.0.1:9/v1"
        window.notes.set_user("notes")
        settle(qloop, ctx)
        assert window.notes.editor.hint.isHidden() and not ctx.read_only  # still editable, now re-embedding
    finally:
        endpoint.configure(None)
