callback({"vers":0.02,"data":{"regions":[{"region":"us-east-1","instanceTypes":[]}]}});
