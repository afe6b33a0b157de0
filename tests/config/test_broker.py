"""The embedded folder broker: a message is never visible half-written (kombu's
own filesystem transport shows it empty while it is written, and a worker that
reads it then dies on a JSONDecodeError)."""

import threading
import uuid
from pathlib import Path

from kombu import Connection
from kombu.transport import filesystem

import config.broker


def folder_connection(folder: Path) -> Connection:
    (folder / "queue").mkdir(parents=True, exist_ok=True)
    (folder / "processed").mkdir(exist_ok=True)
    return Connection("filesystem://", transport_options={
        "data_folder_in": str(folder / "queue"), "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"), "control_folder": str(folder / "control"),
        "store_processed": False,
    })


def fresh_queue_name() -> str:
    """A queue no earlier test bound: kombu keeps the bindings it declared in
    the process's memory and then skips writing them to a new control folder,
    so a queue named like one the suite used before ("celery") would have no
    routing table there, and its messages would go nowhere."""
    return f"wake-{uuid.uuid4().hex[:12]}"


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


# --- Waking a waiting worker (issue 21: the first word at once) ----------------------


def waiting_consumer(tmp_path: Path, polling_interval: float, queue_name: str):
    """A consumer waiting in drain_events (as a worker's loop does), in a thread;
    returns the connection, what it received and the thread."""
    folder_options = folder_connection(tmp_path).transport_options
    connection = Connection("filesystem://", transport_options={**folder_options, "polling_interval": polling_interval})
    received: list = []
    queue = connection.SimpleQueue(queue_name)
    waiting = threading.Event()

    def consume():
        waiting.set()
        try:
            received.append(queue.get(block=True, timeout=180).payload)
        except Exception as error:  # noqa: BLE001  (the assertion below says what happened)
            received.append(error)

    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    assert waiting.wait(5)
    return connection, received, thread


def delivered_to_a_waiting_worker(tmp_path: Path, message: dict) -> list:
    """What a consumer polling every 120 s received within 30 s of `message`
    being put: only a wake-up (or the fallback's short poll) delivers it in time.
    30 s, not less: a loaded machine (a CI run) must not pass for a lost wake-up."""
    name = fresh_queue_name()
    consumer, received, thread = waiting_consumer(tmp_path, polling_interval=120, queue_name=name)
    try:
        with folder_connection(tmp_path) as producer:
            producer.SimpleQueue(name).put(message)
        thread.join(30)
        return received
    finally:
        consumer.release()


def test_a_waiting_worker_is_woken_by_a_message_without_waiting_for_its_poll(tmp_path):
    assert delivered_to_a_waiting_worker(tmp_path, {"turn": 1}) == [{"turn": 1}]


def test_without_inotify_the_worker_polls_the_folder_often(monkeypatch, tmp_path):
    monkeypatch.setattr(config.broker.FolderWatch, "open", classmethod(lambda cls, folder: None))
    assert delivered_to_a_waiting_worker(tmp_path, {"turn": 2}) == [{"turn": 2}]


def test_every_message_of_a_burst_reaches_the_waiting_worker(tmp_path):
    """Lossless: 50 messages renamed in while the consumer sleeps and reads."""
    folder_options = folder_connection(tmp_path).transport_options
    with Connection("filesystem://", transport_options={**folder_options, "polling_interval": 120}) as consumer:
        name = fresh_queue_name()
        queue = consumer.SimpleQueue(name)
        with folder_connection(tmp_path) as producer:
            writer = threading.Thread(target=lambda: [producer.SimpleQueue(name).put({"n": n}) for n in range(50)])
            writer.start()
            got = [queue.get(block=True, timeout=30).payload["n"] for _ in range(50)]
            writer.join(10)
        assert sorted(got) == list(range(50))
