"""The embedded broker (a folder, no server: `make run`), with each message
written whole before a worker can see it.

kombu's filesystem transport creates a message file under its final name and
then writes into it; a worker listing the folder at that moment moves and reads
an empty file, fails to decode it and stops ("Unrecoverable error:
JSONDecodeError"), and the message is lost. Seen in CI under load. Here the
message is written under a name no worker takes (the transport only takes
names ending in `.<queue>.msg`) and renamed into place, which is atomic on one
filesystem.
"""

import os
import uuid
from time import monotonic

from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

# Never taken by a worker: `_get` compares what follows the first dot with `<queue>.msg`.
PARTIAL_SUFFIX = ".partial"


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`, visible only once complete."""
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
