#!/bin/sh
# multiLinePreset with the real agent: a Java stack trace (with "Caused
# by:" and "... N more"), a Python traceback and a Go panic, each written
# between plain lines to the file of a flow with its preset, arrive as one
# record each, byte for byte, and the plain lines as records of their own;
# the Java trace at the end of its file is sent after multiLineFlushMillis.
# Then a kill -9 while a trace is half written: the restart sends the
# line before it once, and the trace once, whole, with the lines that
# completed it after the crash.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/e2e/lib.sh"

start_server --stream s1 --stream s2 --stream s3 --stream s4
mkdir -p "$TMP/java" "$TMP/py" "$TMP/go" "$TMP/crash"

JAVA='java.lang.IllegalStateException: order 42 has no lines
	at com.example.shop.Order.total(Order.java:88)
	at com.example.shop.Checkout.run(Checkout.java:31)
	at java.base/java.lang.Thread.run(Thread.java:833)
Caused by: java.lang.NullPointerException: Cannot invoke "java.util.List.size()"
	at com.example.shop.Order.lines(Order.java:120)
	at com.example.shop.Order.total(Order.java:86)
	... 2 more'
JAVA2='Exception in thread "main" java.lang.OutOfMemoryError: Java heap space
	at java.base/java.util.Arrays.copyOf(Arrays.java:3537)
	... 5 common frames omitted'
PY='Traceback (most recent call last):
  File "/srv/app/worker.py", line 12, in <module>
    main()
  File "/srv/app/worker.py", line 9, in main
    json.loads(raw)
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)'
GO='panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x47f1b2]

goroutine 1 [running]:
main.(*server).handle(0x0, {0x4c1f40, 0xc000012345})
	/src/app/main.go:42 +0x12
main.main()
	/src/app/main.go:17 +0x2a'

printf '%s\n' "2026-12-07 10:00:00 INFO order service up" "$JAVA" \
    "2026-12-07 10:00:01 INFO still up" "$JAVA2" >"$TMP/java/app.log"
printf '%s\n' "worker starting" "$PY" "worker stopped" >"$TMP/py/app.log"
printf '%s\n' "listening on :8080" "$GO" "exit status 2" >"$TMP/go/app.log"

# A crash's restart waits for requests that may still land, at most
# socketTimeOutSeconds: 5 s keeps the test short.
write_conf "$TMP/agent.ini" "socketTimeOutSeconds = 5"
add_flow "$TMP/agent.ini" java s1 "$TMP/java/*.log" \
    "multiLinePreset = java" "multiLineFlushMillis = 300"
add_flow "$TMP/agent.ini" py s2 "$TMP/py/*.log" "multiLinePreset = python"
add_flow "$TMP/agent.ini" go s3 "$TMP/go/*.log" "multiLinePreset = go"
# The trace in the middle of a crash is held as long as the test needs.
add_flow "$TMP/agent.ini" crash s4 "$TMP/crash/*.log" \
    "multiLinePreset = java" "multiLineFlushMillis = 600000"
"$DISAGENT" -t -c "$TMP/agent.ini" >/dev/null

printf '%s\n' "2026-12-07 10:00:00 INFO before the crash" \
    "java.io.UncheckedIOException: disk gone" \
    "	at com.example.Store.write(Store.java:10)" >"$TMP/crash/app.log"
start_agent "$TMP/agent.ini"
wait_for 60 "the records of s1" count_at_least s1 4
wait_for 60 "the records of s2" count_at_least s2 3
wait_for 60 "the records of s3" count_at_least s3 3
exact s1 "2026-12-07 10:00:00 INFO order service up" "$JAVA" \
    "2026-12-07 10:00:01 INFO still up" "$JAVA2"
exact s2 "worker starting" "$PY" "worker stopped"
exact s3 "listening on :8080" "$GO" "exit status 2"

# The line before the trace is acknowledged and saved; the trace waits.
wait_for 60 "the line before the trace" count_at_least s4 1
wait_for 60 "its offset in the state file" grep -qE '"offset":42[,}]' \
    "$TMP/state/state.json"
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
AGENT_PID=
exact s4 "2026-12-07 10:00:00 INFO before the crash"
printf '%s\n' "	at com.example.Main.main(Main.java:5)" \
    "2026-12-07 10:00:09 INFO after the crash" >>"$TMP/crash/app.log"
start_agent "$TMP/agent.ini"
wait_for 60 "the records after the crash" count_at_least s4 3
stop_agent
exact s4 "2026-12-07 10:00:00 INFO before the crash" \
    "java.io.UncheckedIOException: disk gone
	at com.example.Store.write(Store.java:10)
	at com.example.Main.main(Main.java:5)" \
    "2026-12-07 10:00:09 INFO after the crash"
# Nothing of the other flows was sent again by the restart.
exact s1 "2026-12-07 10:00:00 INFO order service up" "$JAVA" \
    "2026-12-07 10:00:01 INFO still up" "$JAVA2"
exact s2 "worker starting" "$PY" "worker stopped"
exact s3 "listening on :8080" "$GO" "exit status 2"
pass
