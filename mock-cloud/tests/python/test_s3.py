"""S3 round trips through boto3 and the AWS CLI."""

import subprocess
import unittest

import botocore.exceptions

import support


def setUpModule():
    support.start()


def tearDownModule():
    support.stop()


class S3(unittest.TestCase):
    def test_a_bucket_round_trips_through_boto3(self):
        s3 = support.SERVER.client("s3")
        s3.create_bucket(Bucket="py-bucket")
        s3.head_bucket(Bucket="py-bucket")
        self.assertIn("py-bucket", [b["Name"] for b in s3.list_buckets()["Buckets"]])
        self.assertIsNone(s3.get_bucket_location(Bucket="py-bucket")["LocationConstraint"])
        with self.assertRaises(botocore.exceptions.ClientError) as raised:
            s3.get_bucket_tagging(Bucket="py-bucket")
        self.assertEqual(raised.exception.response["Error"]["Code"], "NoSuchTagSet")
        s3.put_bucket_tagging(
            Bucket="py-bucket", Tagging={"TagSet": [{"Key": "team", "Value": "a"}]}
        )
        tags = s3.get_bucket_tagging(Bucket="py-bucket")["TagSet"]
        self.assertEqual(tags, [{"Key": "team", "Value": "a"}])
        s3.delete_bucket(Bucket="py-bucket")
        with self.assertRaises(botocore.exceptions.ClientError) as raised:
            s3.head_bucket(Bucket="py-bucket")
        self.assertEqual(raised.exception.response["Error"]["Code"], "404")
        ops = [
            c["operation"] for c in support.SERVER.calls() if c["name"] == "py-bucket"
        ]
        self.assertEqual(
            ops,
            [
                "CreateBucket",
                "HeadBucket",
                "GetBucketLocation",
                "GetBucketTagging",
                "PutBucketTagging",
                "GetBucketTagging",
                "DeleteBucket",
                "HeadBucket",
            ],
        )

    def test_a_bucket_round_trips_through_the_cli(self):
        aws = support.SERVER.aws
        self.assertEqual(aws("s3api", "create-bucket", "--bucket", "cli-bucket")["Location"], "/cli-bucket")
        with self.assertRaises(subprocess.CalledProcessError) as raised:
            aws("s3api", "get-bucket-policy", "--bucket", "cli-bucket")
        self.assertIn("NoSuchBucketPolicy", raised.exception.stderr)
        encryption = aws("s3api", "get-bucket-encryption", "--bucket", "cli-bucket")
        rule = encryption["ServerSideEncryptionConfiguration"]["Rules"][0]
        self.assertEqual(rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"], "AES256")
        aws("s3api", "delete-bucket", "--bucket", "cli-bucket")


if __name__ == "__main__":
    unittest.main()
