"""The embedded folder broker: a message is never visible half-written (kombu's
own filesystem transport shows it empty while it is written, and a worker that
reads it then dies on a JSONDecodeError)."""

import threading
from pathlib import Path

from kombu import Connection
from kombu.transport import filesystem

import config.broker


def folder_connection(folder: Path) -> Connection:
    (folder / "queue").mkdir(parents=True, exist_ok=True)
    (folder / "processed").mkdir(exist_ok=True)
    return Connection("filesystem://", transport_options={
        "data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"), "store_processed": False,
    })


def visible_while_writing(monkeypatch, module, connection: Connection, folder: Path) -> list[bytes]:
    """Put a message whose encoding pauses; what a worker would see meanwhile."""
    encoding, resume = threading.Event(), threading.Event()
    real_dumps = module.dumps

    def slow_dumps(payload):
        encoding.set()
        resume.wait(5)
        return real_dumps(payload)

    monkeypatch.setattr(module, "dumps", slow_dumps)
    writer = threading.Thread(target=lambda: connection.default_channel._put("celery", {"body": "x" * 1000}))
    writer.start()
    assert encoding.wait(5)
    seen = [path.read_bytes() for path in (folder / "queue").iterdir() if path.name.endswith(".celery.msg")]
    resume.set()
    writer.join(5)
    return seen


def test_the_folder_broker_is_ours(tmp_path):
    with folder_connection(tmp_path) as connection:
        assert isinstance(connection.transport, config.broker.Transport)


def test_a_message_is_invisible_until_written_whole(monkeypatch, tmp_path):
    with folder_connection(tmp_path) as connection:
        assert visible_while_writing(monkeypatch, config.broker, connection, tmp_path) == []
        messages = [path for path in (tmp_path / "queue").iterdir()]
        assert [path.name.endswith(".celery.msg") for path in messages] == [True]
        assert connection.default_channel._get("celery") == {"body": "x" * 1000}


def test_kombus_own_transport_shows_a_message_being_written(monkeypatch, tmp_path):
    """Why config/broker.py exists: the stock transport's file is there, empty."""
    connection = folder_connection(tmp_path)
    connection._transport = filesystem.Transport(connection.clone())  # the stock class, not the alias
    try:
        assert visible_while_writing(monkeypatch, filesystem, connection, tmp_path) == [b""]
    finally:
        connection.release()
