# Shared by the Active Record tests: a fresh database (from template1, which
# has the extension and test/clients/setup.sql's helpers) per test file, the
# migration that makes the shop's tables, and the check of returned IDs.
require "active_record"
require "minitest/autorun"
require "pg"

NODE = Integer(ENV.fetch("SNOWFLAKE_NODE", "7"))
ActiveRecord::Migration.verbose = false

# Makes database NAME anew and connects Active Record to it.
def fresh_database(name)
  admin = PG.connect(dbname: "postgres")
  admin.exec("SET client_min_messages = warning")
  admin.exec("DROP DATABASE IF EXISTS #{name}")
  admin.exec("CREATE DATABASE #{name}")
  admin.close
  ActiveRecord::Base.establish_connection(adapter: "postgresql", host: ENV["PGHOST"], port: ENV["PGPORT"],
                                          username: ENV["PGUSER"], database: name)
end

# The recipe's migration: a bigint key and a snowflake-typed key, each filled by snowflake_nextval().
class CreateShop < ActiveRecord::Migration[6.1]
  def change
    create_table :orders, id: :bigint, default: -> { "snowflake_nextval()" } do |t|
      t.text :item
    end
    create_table :posts, id: :snowflake, default: -> { "snowflake_nextval()" } do |t|
      t.text :title
    end
  end
end

# setup.sql's verdict on IDs Active Record returned: "ok" when they are the table's, one at least past a double.
def check_ids(table, ids)
  ActiveRecord::Base.connection.select_value(
    "SELECT clients_check_ids(#{ActiveRecord::Base.connection.quote(table)}, " \
    "#{ActiveRecord::Base.connection.quote(ids.join(","))})"
  )
end
