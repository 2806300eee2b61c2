#!/usr/bin/env python3
"""Print the case table of tests/unit/records/check_convert.c: each case's
input run through the DIS Agent's own converter classes (tests/golden/run,
which needs a checkout of huaweicloud-dis-agent and Debian's Java
packages), so the expected bytes are the DIS Agent's, not ours.

    tests/golden/make_table.py DIS_AGENT_CHECKOUT BUILD_DIR > table.inc

Each case: name, delimiter, isRemainRecordDelimiter, the chain as agent.yml
has it (YAML) and as agent.ini keys, and one framed record (with its
delimiter, as the DIS Agent's converters see it).
"""
import subprocess, sys, os, tempfile

CSV4 = ("- optionName: CSVTOJSON\n  customFieldNames: [f1, f2, f3, f4]\n",
        ["dataProcessingOptions=CSVTOJSON",
         "CSVTOJSON.customFieldNames=f1,f2,f3,f4"])

def log(fmt, extra_yml="", extra_ini=()):
    return ("- optionName: LOGTOJSON\n  logFormat: %s\n%s" % (fmt, extra_yml),
            ["dataProcessingOptions=LOGTOJSON", "LOGTOJSON.logFormat=" + fmt]
            + list(extra_ini))

ACCESS = b'127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326'
COMBINED = ACCESS + b' "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"'
ERROR24 = b'[Fri Sep 09 10:42:29.902022 2011] [core:error] [pid 35708:tid 4328636416] [client 72.15.99.187] File does not exist: /usr/local/apache2/htdocs/favicon.ico'
ERROR_NOTID = b'[Wed Oct 11 14:32:52 2000] [error] [pid 1234] [client 127.0.0.1:5123] client denied by server configuration: /export/home/live/ap/htdocs/test'
ERROR22 = b'[Wed Oct 11 14:32:52 2000] [error] [client 127.0.0.1] client denied by server configuration: /export/home/live/ap/htdocs/test'
RFC3164 = b'Mar  7 04:02:16 myhost sshd[1234]: Accepted publickey for root from 10.0.0.1 port 22 ssh2'
RFC3164_NOPID = b'Mar 17 04:02:16 myhost kernel: [    0.000000] Linux version 6.1.0'
RSYSLOG = b'2024-03-07T04:02:16.123456+08:00 web-1 CRON[4242]: (root) CMD (run-parts /etc/cron.hourly)'
RFC5424 = b'<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM\'su root\' failed for lonvick on /dev/pts/8'

CASES = [
    # CSVTOJSON
    ("csv_issue_example", 10, False, CSV4, b"a,,c\n"),
    ("csv_extra_columns_dropped", 10, False, CSV4, b"1,2,3,4,5,6\n"),
    ("csv_empty_line_all_null", 10, False, CSV4, b"\n"),
    ("csv_only_separators", 10, False, CSV4, b",,,\n"),
    ("csv_crlf_keeps_cr_in_last_column", 10, False, CSV4, b"a,b\r\n"),
    ("csv_no_delimiter_at_end", 10, False, CSV4, b"last,line"),
    ("csv_keep_delimiter", 10, True, CSV4, b"a,b\n"),
    ("csv_escapes_quotes_controls_not_slash", 10, False, CSV4,
     b'say "hi",back\\slash,a/b,\x01\x1f\x7f\t\x08\x0c'),
    ("csv_utf8_and_u2028_as_is", 10, False, CSV4,
     "中文,é,\u2028,\U0001F600\n".encode()),
    ("csv_invalid_utf8_replaced", 10, False, CSV4,
     b"\xff\xc3(,\xe2\x82,\xed\xa0\x80,\xf0\x9f\x98\n"),
    ("csv_semicolon_tab_delimiters", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [a, b, c]\n  delimiter: \";\\t\"\n",
      ["dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a,b,c",
       "CSVTOJSON.delimiter=\\;\\t"]), b"1;2\t3\n"),
    ("csv_blank_delimiter", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [a, b]\n  delimiter: \" \"\n",
      ["dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a,b",
       "CSVTOJSON.delimiter=\\s"]), b"x  y\n"),
    ("csv_non_ascii_delimiter", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [a, b]\n  delimiter: \"｜\"\n",
      ["dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a,b",
       "CSVTOJSON.delimiter=｜"]), "甲｜乙\n".encode()),
    ("csv_pipe_record_delimiter_stays_in_last_column", 124, False, CSV4, b"a,b|"),
    ("csv_duplicate_names_last_column_wins", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [a, b, a]\n",
      ["dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=a,b,a"]),
     b"1,2,3\n"),
    ("csv_json_array_names", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [\"x, y\", \" z\"]\n",
      ["dataProcessingOptions=CSVTOJSON",
       'CSVTOJSON.customFieldNames=["x, y", " z"]']), b"1,2\n"),
    ("csv_prettyprint", 10, False,
     ("- optionName: CSVTOJSON\n  customFieldNames: [f1, f2, f3]\n  jsonFormat: PRETTYPRINT\n",
      ["dataProcessingOptions=CSVTOJSON", "CSVTOJSON.customFieldNames=f1,f2,f3",
       "CSVTOJSON.jsonFormat=PRETTYPRINT"]), b"a,\n"),
    # LOGTOJSON
    ("log_common", 10, False, log("COMMONAPACHELOG"), ACCESS + b"\n"),
    ("log_common_takes_combined_line", 10, False, log("COMMONAPACHELOG"), COMBINED + b"\n"),
    ("log_common_dash_is_null", 10, False, log("COMMONAPACHELOG"),
     b'10.1.2.3 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 304 -\n'),
    ("log_combined", 10, False, log("COMBINEDAPACHELOG"), COMBINED + b"\n"),
    ("log_combined_dash_referer_null", 10, False, log("COMBINEDAPACHELOG"),
     b'host.example.com - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 12 "-" "curl/8.5.0"\n'),
    ("log_combined_needs_referer", 10, False, log("COMBINEDAPACHELOG"), ACCESS + b"\n"),
    ("log_combined_ipv6_does_not_match", 10, False, log("COMBINEDAPACHELOG"),
     b'2001:db8::1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 12 "-" "curl/8.5.0"\n'),
    ("log_combined_crlf_does_not_match", 10, False, log("COMMONAPACHELOG"), ACCESS + b"\r\n"),
    ("log_error_24", 10, False, log("APACHEERRORLOG"), ERROR24 + b"\n"),
    ("log_error_no_module_no_tid_null", 10, False, log("APACHEERRORLOG"), ERROR_NOTID + b"\n"),
    ("log_error_22_without_pid_does_not_match", 10, False, log("APACHEERRORLOG"), ERROR22 + b"\n"),
    ("log_syslog_rfc3164", 10, False, log("SYSLOG"), RFC3164 + b"\n"),
    ("log_syslog_no_pid_null", 10, False, log("SYSLOG"), RFC3164_NOPID + b"\n"),
    ("log_syslog_dash_stays", 10, False, log("SYSLOG"), b"Mar  7 04:02:16 h app[1]: -\n"),
    ("log_rfc3339_rsyslog", 10, False, log("RFC3339SYSLOG"), RSYSLOG + b"\n"),
    ("log_rfc3339_facility", 10, False, log("RFC3339SYSLOG"),
     b"2024-03-07T04:02:16Z <3.4> web-1 app: started\n"),
    ("log_rfc5424_does_not_match", 10, False, log("RFC3339SYSLOG"), RFC5424 + b"\n"),
    ("log_empty_line_does_not_match", 10, False, log("SYSLOG"), b"\n"),
    ("log_custom_names", 10, False,
     log("SYSLOG", "  customFieldNames: [ts, host, prog, pid, msg]\n",
         ["LOGTOJSON.customFieldNames=ts,host,prog,pid,msg"]), RFC3164 + b"\n"),
    ("log_match_pattern", 10, False,
     log("SYSLOG", "  matchPattern: '^(\\S+) (?<rest>.*?)\\s*$'\n  customFieldNames: [first, rest]\n",
         ["LOGTOJSON.matchPattern=^(\\S+) (?<rest>.*?)\\s*$",
          "LOGTOJSON.customFieldNames=first,rest"]), b"alpha beta gamma  \n"),
    ("log_match_pattern_apache_dash_null", 10, False,
     log("COMMONAPACHELOG", "  matchPattern: '(\\S+) (\\S+)'\n  customFieldNames: [a, b]\n",
         ["LOGTOJSON.matchPattern=(\\S+) (\\S+)", "LOGTOJSON.customFieldNames=a,b"]),
     b"- x\n"),
    ("log_match_pattern_java_word_boundary", 10, False,
     log("SYSLOG", "  matchPattern: '.*\\b(\\w+)'\n  customFieldNames: [w]\n",
         ["LOGTOJSON.matchPattern=.*\\b(\\w+)", "LOGTOJSON.customFieldNames=w"]),
     "café1x\n".encode()),
    ("log_prettyprint", 10, False,
     log("SYSLOG", "  jsonFormat: PRETTYPRINT\n", ["LOGTOJSON.jsonFormat=PRETTYPRINT"]),
     RFC3164_NOPID + b"\n"),
    # ADDMETADATA
    ("meta_object", 10, False,
     ("- optionName: ADDMETADATA\n  metadata: {app: web, n: 5, f: 1.50, ok: true, none: ~}\n",
      ["dataProcessingOptions=ADDMETADATA",
       'ADDMETADATA.metadata={"app": "web", "n": 5, "f": 1.50, "ok": true, "none": null}']),
     b'line with "quotes"\n'),
    ("meta_absent_is_null", 10, False,
     ("- optionName: ADDMETADATA\n", ["dataProcessingOptions=ADDMETADATA"]), b"x\n"),
    ("meta_scalar", 10, False,
     ("- optionName: ADDMETADATA\n  metadata: tag\n",
      ["dataProcessingOptions=ADDMETADATA", 'ADDMETADATA.metadata="tag"']), b"x\n"),
    ("meta_numbers_as_java", 10, False,
     ("- optionName: ADDMETADATA\n  metadata: [1.0e10, 0.0001, 100.0, 12345678901234567890, 0.001, 1.5e-7]\n",
      ["dataProcessingOptions=ADDMETADATA",
       "ADDMETADATA.metadata=[1.0e10, 0.0001, 100.0, 12345678901234567890, 0.001, 1.5e-7]"]),
     b"x\n"),
    ("meta_prettyprint_nested", 10, False,
     ("- optionName: ADDMETADATA\n  metadata: {a: [1, x, {b: c}], e: {}, l: []}\n  jsonFormat: PRETTYPRINT\n",
      ["dataProcessingOptions=ADDMETADATA",
       'ADDMETADATA.metadata={"a": [1, "x", {"b": "c"}], "e": {}, "l": []}',
       "ADDMETADATA.jsonFormat=PRETTYPRINT"]), b"x\n"),
    ("meta_keep_delimiter", 10, True,
     ("- optionName: ADDMETADATA\n", ["dataProcessingOptions=ADDMETADATA"]), b"x\n"),
    # ADDBRACKETS, SINGLELINE
    ("brackets_wrap_the_delimiter_too", 10, False,
     ("- optionName: ADDBRACKETS\n", ["dataProcessingOptions=ADDBRACKETS"]), b'"k":"v"\n'),
    ("brackets_last_line", 10, False,
     ("- optionName: ADDBRACKETS\n", ["dataProcessingOptions=ADDBRACKETS"]), b'"k":"v"'),
    ("brackets_pipe_delimiter", 124, False,
     ("- optionName: ADDBRACKETS\n", ["dataProcessingOptions=ADDBRACKETS"]), b'"k":1|'),
    ("singleline_with_brackets", 10, False,
     ("- optionName: SINGLELINE\n- optionName: ADDBRACKETS\n",
      ["dataProcessingOptions=SINGLELINE,ADDBRACKETS"]), b"a\n"),
    # chains
    ("chain_log_then_meta", 10, False,
     ("- optionName: LOGTOJSON\n  logFormat: COMMONAPACHELOG\n- optionName: ADDMETADATA\n  metadata: {app: web}\n",
      ["dataProcessingOptions=LOGTOJSON, ADDMETADATA", "LOGTOJSON.logFormat=COMMONAPACHELOG",
       'ADDMETADATA.metadata={"app":"web"}']), ACCESS + b"\n"),
    ("chain_csv_pretty_then_meta_pretty", 10, True,
     ("- optionName: CSVTOJSON\n  customFieldNames: [a, b]\n  jsonFormat: PRETTYPRINT\n"
      "- optionName: ADDMETADATA\n  metadata: {k: v}\n  jsonFormat: PRETTYPRINT\n",
      ["dataProcessingOptions=CSVTOJSON,ADDMETADATA", "CSVTOJSON.customFieldNames=a,b",
       "CSVTOJSON.jsonFormat=PRETTYPRINT", 'ADDMETADATA.metadata={"k":"v"}',
       "ADDMETADATA.jsonFormat=PRETTYPRINT"]), b"1,2\n"),
    ("chain_brackets_then_csv", 10, False,
     ("- optionName: ADDBRACKETS\n- optionName: CSVTOJSON\n  customFieldNames: [a, b]\n",
      ["dataProcessingOptions=ADDBRACKETS,CSVTOJSON", "CSVTOJSON.customFieldNames=a,b"]),
     b"1,2\n"),
    ("chain_meta_unmatched_later", 10, False,
     ("- optionName: ADDMETADATA\n- optionName: LOGTOJSON\n  logFormat: SYSLOG\n",
      ["dataProcessingOptions=ADDMETADATA,LOGTOJSON", "LOGTOJSON.logFormat=SYSLOG"]),
     RFC3164 + b"\n"),
]

def c_bytes(b):
    out, prev_hex = [], False
    for ch in b:
        c = chr(ch)
        if c == '"' or c == '\\':
            out.append('\\' + c); prev_hex = False
        elif 0x20 <= ch < 0x7f and not (prev_hex and c in "0123456789abcdefABCDEF"):
            out.append(c); prev_hex = False
        else:
            out.append('\\x%02x' % ch); prev_hex = True
    return '"' + ''.join(out) + '"'

def c_str(s):
    return c_bytes(s.encode())

def main():
    src, build = sys.argv[1], sys.argv[2]
    run = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run")
    work = tempfile.mkdtemp()
    for name, delim, keep, (yml, ini), rec in CASES:
        y = os.path.join(work, name + ".yml")
        open(y, "w").write(yml)
        # The DIS Agent's output, by the harness.
        j = subprocess.run(["sh", "-c", 'java -cp "$0" DisAgentChain "$@"',
                            os.environ["GOLDEN_CP"], y, str(delim),
                            "true" if keep else "false", "UTF-8"],
                           input=rec, capture_output=True, check=True)
        line = j.stdout.decode().strip()
        assert len(j.stdout.decode().splitlines()) == 1, (name, j.stdout)
        kind, _, hexs = line.partition(" ")
        want = None if kind == "SKIP" else bytes.fromhex(hexs)
        assert kind in ("SEND", "SKIP"), line
        # Ours must agree before the row is written.
        o = subprocess.run(["tests/golden/chain", str(delim),
                            "true" if keep else "false"] + ini, cwd=build,
                           input=rec, capture_output=True, check=True)
        assert o.stdout.decode().strip() == line, (name, o.stdout, line)
        print("\t/* %s */" % name)
        print("\t{ %s, %d, %s," % (c_str(name), delim, "true" if keep else "false"))
        print("\t  { %s, NULL }," % ", ".join(c_str(k) for k in ini))
        print("\t  %s, %d," % (c_bytes(rec), len(rec)))
        if want is None:
            print("\t  NULL, 0 },")
        else:
            print("\t  %s, %d }," % (c_bytes(want), len(want)))

main()
