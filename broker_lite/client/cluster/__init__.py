"""Connections and the cluster: :mod:`.connection` (one broker connection: TLS, SASL, framing),
:mod:`.versions` (API version negotiation), :mod:`.throttling` (broker quotas, KIP-219),
:mod:`.metadata` (cluster metadata), :mod:`.cluster` (connections and routing to leaders) and
:mod:`.coordinators` (finding a group's or a transactional id's coordinator)."""
