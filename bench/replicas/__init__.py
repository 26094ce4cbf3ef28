"""Several gateways, one database: real trials of replicas that share the work (issue 29, item 5; the
fault trials and ``in_flight_at_kill``: issue 38).

    python -m bench.replicas --database postgresql://USER@HOST/DB | auto | sqlite
        [--trials webhook,polling,feishu,stall,skew,race] [--replicas 3] [--chats 50] [--messages 12]
        [--latency 0.2] [--kill-at 0.4] [--no-kill] [--restart-after 3] [--stall-for 35] [--skew 25]
        [--jobs-every 2] [--no-throughput] [--workdir DIR] [--json]

``--database auto`` starts a throwaway PostgreSQL cluster for the run and removes it after
(bench/replicas/cluster.py); ``sqlite`` runs one replica only (the smoke test of the machinery). Each
trial runs on a scratch database of its own, created on the server and dropped after.

What runs, all on 127.0.0.1 and through the production path: N ``tierclaw gateway`` processes (each its
own ports, config, log; ``gateway.replicaId`` r0, r1, …; ``gateway.jobsEvery`` = ``--jobs-every`` so each
scheduled job fires a period every few seconds — a simulated day of periods), the model stub in a child
process with ``--latency`` per reply (bench/stub_process.py; its memory model extracts one fact per
``note:WORD``, so a duplicated extraction shows as duplicate memories), and per trial:

- ``webhook`` (bench/replicas/webhook.py): Telegram in webhook mode behind the round-robin forwarder
  (localservers/round_robin.py), the local Telegram server posting each update and retrying until 2xx;
  replica 0 SIGKILLed once ``--kill-at`` of the updates were accepted, restarted ``--restart-after`` s later.
- ``polling`` (bench/replicas/polling.py): Telegram in polling mode, one poller by the advisory lock; the
  poller SIGKILLed; ``takeover_s`` = from the kill until another replica's first ``getUpdates``.
- ``feishu`` (bench/replicas/feishu.py): Feishu in HTTP-callback mode behind the forwarder, the local
  Feishu server posting signed, encrypted events and retrying each until 2xx
  (localservers/feishu_callback.py); replica 0 killed and restarted.
- ``stall``, ``skew``, ``race`` (bench/replicas/faults.py): the webhook set-up with replica 0 SIGSTOPped
  for ``--stall-for`` seconds (past its 30 s lease) then SIGCONTinued; with replica 1's clock ``--skew``
  seconds ahead (``gateway.clockOffset``); with each chat's messages posted two at a time over two
  connections. No kill in these.

Each chat's messages go in order (the next once the last was accepted), chats concurrently. The counts
(bench/replicas/counting.py) come from what the platform stub received: ``lost`` (sent, never answered),
``answered_twice``, ``order_violations`` (a chat's first answer to an earlier message arriving after the
first answer to a later one), ``duplicate_memories`` (live memories of one owner with the same text, read
after the run; ``memories`` says out of how many live memories), ``job_runs_duplicated`` (runs beyond
the first of a (job, period), from the replicas' "job X of PERIOD ran here" log lines; ``job_periods``
says out of how many), ``takeover_s`` (webhook and
Feishu: from the kill until the last message accepted and unanswered at the kill was answered; polling:
until the next poll; stall: from the stop), ``in_flight_at_kill`` (the messages the killed or stopped replica
had claimed and not marked answered — the claim is the send intent —, read from the database at once: on
Telegram the only ones that may be answered twice; None without a kill), ``stored_out_of_order`` (messages
stored after a later message of their chat, by the platform's order, read from the inbox after the run:
how often the trial made the claim put deliveries back in order — ``race``'s window). ``throughput_one`` /
``throughput`` are messages/s of the webhook path with 1 and 2 replicas, zero model latency, no kill
(``--no-throughput`` skips them; on SQLite only ``throughput_one``).
``cache_staleness`` is filled by ``bench/cache_staleness.py``'s ``measure_staleness`` when that module
exists (null otherwise).

``--json`` prints one object: ``store``, ``runs`` [{mode, replicas, messages, answered, lost,
answered_twice, order_violations, duplicate_memories, memories, job_runs_duplicated, takeover_s,
in_flight_at_kill, stored_out_of_order, …}],
``throughput``, ``throughput_one``, ``cache_staleness``. Exit 1 when any run lost a message, answered one
out of order, duplicated a memory or a job run, or answered one twice beyond what was in flight at a
Telegram kill (``cli.run_failed``); 2 on a bad ``--database``.
"""

from bench.replicas.cli import main

__all__ = ["main"]
