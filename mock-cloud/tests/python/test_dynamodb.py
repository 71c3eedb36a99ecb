"""DynamoDB round trips through boto3 (with its waiters and paginators) and the AWS CLI."""

import subprocess
import time
import unittest

import support


def setUpModule():
    support.start()


def tearDownModule():
    support.stop()


def create_args(name):
    return {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }


class DynamoDb(unittest.TestCase):
    def setUp(self):
        # Tables provision in 50 ms, so that botocore's waiters see the change on their
        # first or second poll.
        support.SERVER.put_config(
            {"provisioning": {"database_create_ms": 50, "database_delete_ms": 50}}
        )

    def test_every_table_operation_round_trips_through_boto3(self):
        db = support.SERVER.client("dynamodb")
        created = db.create_table(
            **create_args("users"), Tags=[{"Key": "team", "Value": "a"}]
        )["TableDescription"]
        self.assertEqual(created["TableStatus"], "CREATING")
        arn = created["TableArn"]
        self.assertEqual(arn, f"arn:aws:dynamodb:{support.REGION}:{support.ACCOUNT_ID}:table/users")
        db.get_waiter("table_exists").wait(
            TableName="users", WaiterConfig={"Delay": 0.1, "MaxAttempts": 50}
        )
        self.assertEqual(db.describe_table(TableName="users")["Table"]["TableStatus"], "ACTIVE")
        for name in ("orders", "events"):
            db.create_table(**create_args(name))
        pages = db.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2})
        self.assertEqual(
            [page["TableNames"] for page in pages], [["events", "orders"], ["users"]]
        )
        db.tag_resource(ResourceArn=arn, Tags=[{"Key": "env", "Value": "dev"}])
        db.untag_resource(ResourceArn=arn, TagKeys=["team"])
        tags = db.list_tags_of_resource(ResourceArn=arn)["Tags"]
        self.assertEqual(tags, [{"Key": "env", "Value": "dev"}])
        with self.assertRaises(db.exceptions.ResourceInUseException):
            db.create_table(**create_args("users"))
        deleted = db.delete_table(TableName="users")["TableDescription"]
        self.assertEqual(deleted["TableStatus"], "DELETING")
        db.get_waiter("table_not_exists").wait(
            TableName="users", WaiterConfig={"Delay": 0.1, "MaxAttempts": 50}
        )
        with self.assertRaises(db.exceptions.ResourceNotFoundException):
            db.describe_table(TableName="users")
        ops = {c["operation"] for c in support.SERVER.calls() if c["service"] == "dynamodb"}
        self.assertEqual(
            ops,
            {
                "CreateTable",
                "DescribeTable",
                "DeleteTable",
                "ListTables",
                "TagResource",
                "UntagResource",
                "ListTagsOfResource",
            },
        )

    def test_a_table_round_trips_through_the_cli(self):
        aws = support.SERVER.aws
        created = aws(
            "dynamodb", "create-table", "--table-name", "cli-table",
            "--attribute-definitions", "AttributeName=id,AttributeType=S",
            "--key-schema", "AttributeName=id,KeyType=HASH",
            "--billing-mode", "PAY_PER_REQUEST",
        )
        self.assertEqual(created["TableDescription"]["TableStatus"], "CREATING")
        self.assertEqual(aws("dynamodb", "list-tables")["TableNames"], ["cli-table"])
        arn = created["TableDescription"]["TableArn"]
        # (The CLI's waiter polls every 20 s: poll by hand, bounded.)
        for _ in range(50):
            table = aws("dynamodb", "describe-table", "--table-name", "cli-table")["Table"]
            if table["TableStatus"] == "ACTIVE":
                break
            time.sleep(0.05)
        self.assertEqual(table["TableStatus"], "ACTIVE")
        aws("dynamodb", "tag-resource", "--resource-arn", arn, "--tags", "Key=team,Value=a")
        tags = aws("dynamodb", "list-tags-of-resource", "--resource-arn", arn)["Tags"]
        self.assertEqual(tags, [{"Key": "team", "Value": "a"}])
        aws("dynamodb", "delete-table", "--table-name", "cli-table")
        with self.assertRaises(subprocess.CalledProcessError) as raised:
            aws("dynamodb", "describe-table", "--table-name", "nope")
        self.assertIn("ResourceNotFoundException", raised.exception.stderr)


if __name__ == "__main__":
    unittest.main()
