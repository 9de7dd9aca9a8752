<?php
// PHP PDO (pdo_pgsql) with a snowflake default: lastInsertId() asks PostgreSQL
// for lastval(), which only knows sequences, so it fails; INSERT ... RETURNING
// and snowflake_lastval() give the new ID. Run by test/clients/run.sh (PGHOST,
// PGPORT, SNOWFLAKE_NODE from its environment). Exits 1 on any failed check.
require_once __DIR__ . "/check.php";

$pdo = new PDO(sprintf("pgsql:host=%s;port=%s;dbname=postgres", getenv("PGHOST"), getenv("PGPORT")), "postgres", "",
               [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$pdo->exec("DROP TABLE IF EXISTS php_orders");
$pdo->exec("CREATE TABLE php_orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text)");

// The trap: lastInsertId() without a sequence name runs SELECT LASTVAL().
$pdo->exec("INSERT INTO php_orders (item) VALUES ('tea')");
try {
    $pdo->lastInsertId();
    check("lastInsertId() fails with a snowflake default", false);
} catch (PDOException $e) {
    check("lastInsertId() fails with a snowflake default (SQLSTATE " . $e->getCode() . ")", $e->getCode() === "55000");
}

// Recipe 1: RETURNING.
$id = $pdo->query("INSERT INTO php_orders (item) VALUES ('cake') RETURNING id")->fetchColumn();
// Recipe 2: snowflake_lastval(), in the same session.
$last = $pdo->query("SELECT snowflake_lastval()")->fetchColumn();
check("snowflake_lastval() is the ID RETURNING gave ($id)", (string)$last === (string)$id);
check("PHP holds the ID exactly as a 64-bit integer", is_int($id) ? $id > 2 ** 53 : ctype_digit($id));
$lookup = $pdo->prepare("SELECT item, (snowflake_parse(id)).node FROM php_orders WHERE id = ?");
$lookup->execute([$id]);
[$item, $node] = $lookup->fetch(PDO::FETCH_NUM);
check("the ID finds its row on node " . getenv("SNOWFLAKE_NODE"), $item === "cake" && (string)$node === getenv("SNOWFLAKE_NODE"));
exit($failed);
