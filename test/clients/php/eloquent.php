<?php
// Laravel's Eloquent 8 (Debian's php-illuminate-database, outside a Laravel
// app through Capsule) with snowflake keys: a bigint key made by the schema
// builder with DEFAULT snowflake_nextval(), and a snowflake-typed key
// (test/clients/setup.sql's laravel_sf). Rows made by create() and save()
// (Eloquent's insertGetId, INSERT ... RETURNING on PostgreSQL) and by insert()
// in bulk; every ID equal to the table's id::text (with IDs a double cannot
// hold among them), rows read back by ID, toJson() with the key cast to
// string, and the traps: toJson() without the cast writes a number, and PDO's
// lastInsertId() fails with 55000. Run by test/clients/run.sh (PGHOST,
// PGPORT, SNOWFLAKE_NODE from its environment). Exits 1 on any failed check.
require_once "/usr/share/php/Illuminate/Database/autoload.php";

use Illuminate\Database\Capsule\Manager as Capsule;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Database\Query\Expression;
use Illuminate\Database\Schema\Blueprint;

require_once __DIR__ . "/check.php";

$capsule = new Capsule();
$capsule->addConnection(["driver" => "pgsql", "host" => getenv("PGHOST"), "port" => getenv("PGPORT"),
    "database" => "postgres", "username" => "postgres", "password" => ""]);
$capsule->setAsGlobal();
$capsule->bootEloquent();
$db = $capsule->getConnection();

// The recipe: the key as the column's type, filled by the database; toJson() writes it as a string.
class Order extends Model {
    protected $table = "laravel_orders";
    public $timestamps = false;
    protected $guarded = [];
    protected $casts = ["id" => "string"];
}

class Post extends Model {
    protected $table = "laravel_sf";
    public $timestamps = false;
    protected $guarded = [];
    protected $casts = ["id" => "string"];
}

// The same table without the cast: only to show toJson() writing a number.
class PlainOrder extends Model {
    protected $table = "laravel_orders";
    public $timestamps = false;
    protected $guarded = [];
}

$db->select("SELECT clients_make_tables('laravel')");
$schema = $capsule->schema();
$schema->dropIfExists("laravel_orders");
$schema->create("laravel_orders", function (Blueprint $t) {
    $t->bigInteger("id")->primary()->default(new Expression("snowflake_nextval()"));
    $t->text("v");
});

// Makes rows of $model singly and in bulk; checks the IDs against its table and reads each back by ID.
function made_and_read(string $model, string $table): void {
    global $db;
    $one = $model::create(["v" => "one"]);
    $two = new $model(["v" => "two"]);
    $two->save();
    // insert() gives no IDs back: read them from the table.
    $model::insert(array_map(fn ($n) => ["v" => "b$n"], range(1, 300)));
    $ids = $model::pluck("id")->all();
    check("$model: create() and save() gave string IDs of node " . getenv("SNOWFLAKE_NODE"),
        is_string($one->id) && in_array($one->id, $ids, true) && in_array($two->id, $ids, true) &&
        (((int) $one->id >> 12) & 1023) === (int) getenv("SNOWFLAKE_NODE"));
    $verdict = $db->selectOne("SELECT clients_check_ids(?, ?) AS v", [$table, implode(",", $ids)])->v;
    check("$model: the IDs are the table's ($verdict)", $verdict === "ok");
    $found = 0;
    foreach ($ids as $id) $found += $model::find($id)->id === $id ? 1 : 0;
    check("$model: every row found by its ID (" . $found . " of " . count($ids) . ")", $found === count($ids));
    $json = json_decode($one->toJson(), true);
    check("$model: toJson() writes the ID as a string", $json["id"] === $one->id);
}

made_and_read(Order::class, "laravel_orders");
made_and_read(Post::class, "laravel_sf");

$column = $db->selectOne("SELECT column_default FROM information_schema.columns
    WHERE table_name = 'laravel_orders' AND column_name = 'id'")->column_default;
check("the schema builder made the DEFAULT ($column)", $column === "snowflake_nextval()");

// Trap: without the cast, toJson() writes the ID as a bare number.
$plain = PlainOrder::create(["v" => "plain"]);
check("trap: without the cast, toJson() writes a number", is_int(json_decode($plain->toJson(), true)["id"]));
// Trap: PDO's lastInsertId() asks for lastval(), which knows only sequences.
try {
    $db->getPdo()->lastInsertId();
    check("trap: lastInsertId() fails", false);
} catch (PDOException $e) {
    check("trap: lastInsertId() fails with SQLSTATE " . $e->getCode(), $e->getCode() === "55000");
}
exit($failed);
