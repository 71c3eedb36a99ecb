"""STS round trips through boto3 and the AWS CLI: the caller's identity, and an assumed
role whose temporary credentials S3 accepts."""

import unittest

import boto3

import support

ROLE = f"arn:aws:iam::{support.ACCOUNT_ID}:role/deployer"


def setUpModule():
    support.start()


def tearDownModule():
    support.stop()


class Sts(unittest.TestCase):
    def test_the_default_key_is_the_root_of_its_account(self):
        who = support.SERVER.client("sts").get_caller_identity()
        self.assertEqual(who["Account"], support.ACCOUNT_ID)
        self.assertEqual(who["Arn"], f"arn:aws:iam::{support.ACCOUNT_ID}:root")
        cli = support.SERVER.aws("sts", "get-caller-identity")
        self.assertEqual(cli["Account"], support.ACCOUNT_ID)

    def test_assumed_role_credentials_sign_s3_calls(self):
        assumed = support.SERVER.client("sts").assume_role(
            RoleArn=ROLE, RoleSessionName="py-session", DurationSeconds=900
        )
        creds = assumed["Credentials"]
        self.assertTrue(creds["AccessKeyId"].startswith("ASIA"))
        self.assertEqual(
            assumed["AssumedRoleUser"]["Arn"],
            f"arn:aws:sts::{support.ACCOUNT_ID}:assumed-role/deployer/py-session",
        )
        s3 = boto3.client(
            "s3",
            endpoint_url=support.SERVER.url,
            region_name=support.REGION,
            aws_access_key_id=creds["AccessKeyId"],
            aws_secret_access_key=creds["SecretAccessKey"],
            aws_session_token=creds["SessionToken"],
        )
        s3.list_buckets()
        cli = support.SERVER.aws(
            "sts", "assume-role", "--role-arn", ROLE, "--role-session-name", "cli-session"
        )
        self.assertTrue(cli["Credentials"]["SessionToken"])
        calls = [(c["service"], c["operation"], c["status"]) for c in support.SERVER.calls()]
        self.assertIn(("sts", "AssumeRole", 200), calls)
        self.assertIn(("s3", "ListBuckets", 200), calls)


if __name__ == "__main__":
    unittest.main()
