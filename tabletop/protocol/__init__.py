"""The table's socket protocol, declared once and checked at the edge.

A message's way, read from the signatures:

    socket   consumers.RoomConsumer.receive(text)
    edge     wire.decode(raw, system=..., is_gm=...) -> commands.Decoded | commands.Refused
             wire.precheck(decoded, system=...) -> commands.Decoded | commands.Refused
               Command.precheck(*, table, **checked) -> the handler's values  (once; the event loop
               for a short message, a thread of its own for a long one: a roll's is
               services.rolls.check_roll -> CheckedRoll)
    service  wire.perform(decoded, seat_id=..., deadline=...) -> wire.Done        (ORM thread)
               services.events.unit_of_work(work) -> (result, [Event])            (one transaction)
                 Command.handler(*, uow, seat_id: int, **values) -> Event         (core.py, systems)
                   uow.record(session_id=..., kind=..., ...) -> Event             (checked against
                   events.catalogue() in the tests; its log line from events.log_line)
    sockets  hub.publish(layer, group, payload) for payload in Done.payloads     (event loop)
             -> delivery.Delivery.offer(...) per socket, in seq order
    screens  static/tabletop/state.js applyEvent(state, event), the same rule as
             selectors.room.apply_event(state, event)

A service called alone (views, the admin, commands) opens a unit of work of its own
(``services.events.change(None)``), whose events are published when its transaction
commits. ``bodies`` declares the JSON endpoints' bodies; ``docs`` writes the tables of
docs/protocol.md from all of it.
"""
