"""The WebSocket fan-out: order, per-subscriber queues, the subscriber limit."""

from __future__ import annotations

import asyncio
import threading
import uuid

from ohtui.server.hub import MAX_SUBSCRIBERS, Hub


def test_frames_from_threads_reach_every_subscriber_in_order() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        cid = uuid.uuid4()
        a, b = hub.subscribe(cid), hub.subscribe(cid)
        assert a is not None and b is not None
        thread = threading.Thread(
            target=lambda: [hub.publish(cid, {"id": str(n)}) for n in range(200)]
        )
        thread.start()
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
        got_a = [await asyncio.wait_for(a.queue.get(), 5) for _ in range(200)]
        got_b = [await asyncio.wait_for(b.queue.get(), 5) for _ in range(200)]
        hub.unsubscribe(a)
        hub.publish(cid, {"id": "late"})
        await asyncio.sleep(0.05)
        assert a.queue.empty() and b.queue.qsize() == 1
        assert hub.subscriber_count(cid) == 1
        return got_a, got_b

    got_a, got_b = asyncio.run(scenario())
    expected = [f'{{"id": "{n}"}}' for n in range(200)]
    assert got_a == expected and got_b == expected


def test_one_subscriber_too_many_is_refused() -> None:
    async def scenario() -> None:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        cid = uuid.uuid4()
        subscriptions = [hub.subscribe(cid) for _ in range(MAX_SUBSCRIBERS)]
        assert all(s is not None for s in subscriptions)
        assert hub.subscribe(cid) is None  # the socket closes with 1013
        assert hub.subscribe(uuid.uuid4()) is not None  # others are not affected

    asyncio.run(scenario())


def test_an_ohtui_only_frame_reaches_only_ohtui_subscribers() -> None:
    async def scenario() -> tuple[list[str], list[str]]:
        hub = Hub()
        hub.bind(asyncio.get_running_loop())
        cid = uuid.uuid4()
        theirs, ours = hub.subscribe(cid), hub.subscribe(cid, ohtui_fields=True)
        assert theirs is not None and ours is not None
        hub.publish(cid, None, {"kind": "CheckpointEvent"})
        hub.publish(cid, {"kind": "MessageEvent"})
        await asyncio.sleep(0.05)
        return (
            [theirs.queue.get_nowait() for _ in range(theirs.queue.qsize())],
            [ours.queue.get_nowait() for _ in range(ours.queue.qsize())],
        )

    theirs, ours = asyncio.run(scenario())
    assert theirs == ['{"kind": "MessageEvent"}']
    assert ours == ['{"kind": "CheckpointEvent"}', '{"kind": "MessageEvent"}']
