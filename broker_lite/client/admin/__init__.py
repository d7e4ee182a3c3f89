"""Administration, as Kafka's ``Admin`` client: :mod:`.admin` (topics, and the facade), with
:mod:`.groups` (consumer groups), :mod:`.configs` (configurations), :mod:`.acls` (ACLs),
:mod:`.records` (DeleteRecords), :mod:`.replicas` (elections and reassignments) and
:mod:`.scram` (SCRAM credentials)."""
