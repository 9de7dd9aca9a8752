<?php
// Shared by the PHP tests: check() prints one "ok:" or "FAIL:" line per check
// and remembers a failure in $failed, with which each test exits.
$failed = 0;

// Prints the check's line; a failed check makes $failed 1.
function check(string $what, bool $ok): void {
    global $failed;
    echo ($ok ? "ok: " : "FAIL: ") . $what . "\n";
    if (!$ok) $failed = 1;
}
